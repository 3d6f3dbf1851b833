/**
 * The streams level in a chain's shape: streams spread over many locations (two register
 * streams per location, each location its own key), on one API node, so that what a location
 * costs the node (its feed, its channel subscription, its session, its replay read) shows
 * beside what a stream costs. Measures the node's memory per open stream (after a full GC, as
 * the one-location level does) and the fan-out while orders flow across the locations: orders
 * created at locations spread over the chain, several at a time, each timed from its create
 * request to its arrival on each of its location's streams. The memory floor (bare servers
 * holding as many sockets) is the one-location level's when that ran: a socket costs the same
 * whatever location it serves.
 */
import { MongoClient } from 'mongodb';
import { generateApiKey, hashApiKey } from '@pos/shared/auth/keys';
import type { LocationDoc, SessionDoc } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import { collections } from '@pos/shared/store/mongo';
import type { Cost } from './cost';
import type { Backends, Deployment } from './deployment';
import { collectGarbage, deploy, GC_HOOK, scrapeMetrics } from './deployment';
import { inBatches } from './service-load';
import { percentile, round } from './statistics';
import type { ClientCommand, ClientReply } from './stream-clients';
import { BASELINE_STREAMS, Helper, memoryPerStream, raiseFileLimit, settle, settleAfterBurst, StreamMemory, StreamsLevel } from './streams';

export interface ChainStreamsLevel {
  streams: number;
  locations: number;
  clientProcesses: number;
  memory: StreamMemory;
  /** Orders created across the chain while measuring, `concurrency` at a time. */
  events: number;
  concurrency: number;
  /** Create request to arrival on each of the location's streams, ms. */
  arrival: { p50Ms: number; p99Ms: number; maxMs: number; missed: number };
  /** What one created order cost the processes behind it. */
  cost?: Cost;
  memoryFloors?: StreamsLevel['memoryFloors'];
}

/**
 * The chain's locations, each with a register session, written straight into the deployment's
 * database (as the admin API writes them, less the audit records): through the admin API, the
 * stand-in slowed with every location and session until it timed out at about 3,900 on a loaded
 * machine, and their creation is not what this level measures.
 */
async function seedLocations(mongoUrl: string, deployment: Deployment, count: number): Promise<{ id: string; apiKey: string }[]> {
  const client = new MongoClient(mongoUrl);
  try {
    const c = collections(client.db(deployment.db));
    const now = new Date();
    const seeded: { id: string; apiKey: string }[] = [];
    for (let from = 0; from < count; from += SEED_BATCH) {
      const locations: LocationDoc[] = [];
      const sessions: SessionDoc[] = [];
      for (let i = from; i < Math.min(count, from + SEED_BATCH); i++) {
        const location: LocationDoc = { _id: newId(), name: `Bench chain ${i + 1}`, failureThreshold: 3, orderSeq: 0, commandSeq: 0, createdAt: now };
        const apiKey = generateApiKey(deployment.apiKeySecret);
        locations.push(location);
        sessions.push({ _id: newId(), createdAt: now, type: 'SERVICE', locationId: location._id, deviceId: 'bench-chain', keyHash: hashApiKey(apiKey) });
        seeded.push({ id: location._id, apiKey });
      }
      await c.locations.insertMany(locations);
      await c.sessions.insertMany(sessions);
    }
    return seeded;
  } finally {
    await client.close();
  }
}

const SEED_BATCH = 500;
const ROWS = (marker: string) => [{ productId: marker, name: 'Burger', quantity: 1, unitPrice: 1290 }];

export async function measureChainStreams(
  backends: Backends,
  options: { streams: number; locations: number; clientProcesses: number; events: number; concurrency: number; say(line: string): void },
): Promise<ChainStreamsLevel> {
  const { streams, locations: locationCount, say } = options;
  const perLocation = Math.max(1, Math.round(streams / locationCount));
  raiseFileLimit(streams + 1_000, say);
  // The stand-in slows as the sessions and locations pile up: its reads may outlast the default MONGO_TIMEOUT while thousands are created.
  const deployment = await deploy('chain-streams', backends, { apiCount: 1, apiNodeArgs: GC_HOOK, maxStreams: streams, env: { MONGO_TIMEOUT: '30s' } });
  const clients: Helper<ClientCommand, ClientReply>[] = [];
  try {
    const { admin, apis } = deployment;
    const api = apis[0]!;
    const port = Number(new URL(api.origin).port);
    const created = Date.now();
    const locations = await seedLocations(backends.mongoUrl, deployment, locationCount);
    say(`chain streams: ${locationCount} locations with a register key each (${Math.round((Date.now() - created) / 1000)} s)`);
    // Stream i belongs to location floor(i / perLocation): a location's streams are neighbours.
    const requestOf = (i: number) =>
      `GET /api/v1/notifications/service/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\napi_key: ${locations[Math.floor(i / perLocation) % locationCount]!.apiKey}\r\nAccept: text/event-stream\r\n\r\n`;
    for (let i = 0; i < options.clientProcesses; i++) clients.push(Helper.start<ClientCommand, ClientReply>('bench/stream-clients.ts').helper);
    /** Opens streams [from, to), in contiguous slices, one per client process. */
    const openRange = async (from: number, to: number) => {
      const size = Math.ceil((to - from) / clients.length);
      const replies = await Promise.all(
        clients.map((c, k) => {
          const start = from + k * size;
          const end = Math.min(to, start + size);
          if (end <= start) return Promise.resolve({ opened: 0, failed: 0, errors: [] } as ClientReply);
          const requests = Array.from({ length: end - start }, (_, j) => requestOf(start + j));
          return c.ask({ cmd: 'open', port, count: requests.length, requests });
        }),
      );
      const opened = replies.reduce((sum, r) => sum + ('opened' in r ? r.opened : 0), 0);
      if (opened < to - from) throw new Error(`opened ${opened} of ${to - from} streams: ${replies.flatMap((r) => ('errors' in r ? r.errors : [])).join('; ')}`);
    };

    await openRange(0, BASELINE_STREAMS);
    await settle();
    await collectGarbage(apis);
    const before = await scrapeMetrics(api.origin);
    const opened = Date.now();
    await openRange(BASELINE_STREAMS, streams);
    say(`chain streams: ${streams} open over ${locationCount} locations (${Math.round((Date.now() - opened) / 1000)} s to open)`);
    await settleAfterBurst();
    await collectGarbage(apis);
    const after = await scrapeMetrics(api.origin);
    const memory = memoryPerStream(before, after);
    say(
      `chain streams: ${memory.rssPerStreamKiB} KiB RSS, ${memory.heapPerStreamKiB} KiB heap used (${memory.heapTotalPerStreamKiB} KiB reserved, ${memory.externalPerStreamKiB} KiB external) per stream`,
    );

    // Fan-out while orders flow: orders created at locations spread over the chain, several at once.
    const stride = Math.max(1, Math.floor(locationCount / options.events));
    const warmup = Math.min(20, options.events);
    const total = warmup + options.events;
    const startedAt = new Map<string, number>();
    const locationOfEvent = (e: number) => locations[(e * stride) % locationCount]!;
    const flow = (from: number, to: number) =>
      inBatches(to - from, options.concurrency, async (i) => {
        const marker = `fan${from + i}`;
        startedAt.set(marker, performance.timeOrigin + performance.now());
        await admin.createOrder(locationOfEvent(from + i).id, ROWS(marker));
      });
    await flow(0, warmup);
    await Promise.all(clients.map((c) => c.ask({ cmd: 'watch', prefix: 'fan' })));
    const probe = deployment.probe();
    await probe.start();
    await flow(warmup, total);
    // the last events' frames are on their way
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const cost = await probe.stop(options.events);
    const seen = new Map<string, number[]>();
    for (const reply of await Promise.all(clients.map((c) => c.ask({ cmd: 'collect' })))) {
      if (!('seen' in reply)) continue;
      for (const [marker, times] of Object.entries(reply.seen)) seen.set(marker, [...(seen.get(marker) ?? []), ...times]);
    }
    const latencies: number[] = [];
    let missed = 0;
    for (let e = warmup; e < total; e++) {
      const marker = `fan${e}`;
      const times = seen.get(marker) ?? [];
      latencies.push(...times.map((at) => at - startedAt.get(marker)!));
      missed += Math.max(0, perLocation - times.length);
    }
    latencies.sort((a, b) => a - b);
    const arrival = { p50Ms: round(percentile(latencies, 50)), p99Ms: round(percentile(latencies, 99)), maxMs: round(latencies.at(-1) ?? 0), missed };
    say(`chain streams: fan-out while ${options.events} orders flow (${options.concurrency} at a time): p50 ${arrival.p50Ms} ms, p99 ${arrival.p99Ms} ms, missed ${missed}`);
    await Promise.all(clients.map((c) => c.ask({ cmd: 'close' })));
    return { streams, locations: locationCount, clientProcesses: clients.length, memory, events: options.events, concurrency: options.concurrency, arrival, cost };
  } finally {
    for (const client of clients) client.stop();
    await deployment.stop().catch(() => undefined);
  }
}
