/**
 * The streams scenarios (docs/benchmark-method.md), their connections held by client processes
 * over raw sockets: the fan-out over two API nodes; 10,000 streams on one node (memory per stream,
 * fan-out against a bare write loop, bare servers' memory); 10,000 over 5,000 locations.
 */
import { MongoClient } from 'mongodb';
import { generateApiKey, hashApiKey } from '@pos/shared/auth/keys';
import { CustomerClient } from '@pos/shared/clients/customer-client';
import { RegisterClient } from '@pos/shared/clients/register/client';
import type { LocationDoc, SessionDoc } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import { collections } from '@pos/shared/store/mongo';
import type { HeldReply } from './bare/held-streams';
import type { FloorCommand, FloorReply } from './bare/socket-floor';
import {
  type ApiNode,
  type Backends,
  deploy,
  type Deployment,
  GC_HOOK,
  redisProcesses,
  scrapeMetrics,
} from './deployment';
import { type Cost, type CpuShare, measureCpu } from './cost';
import { inBatches } from './service-load';
import { percentile, round } from './statistics';
import type { Target } from './stream-clients';
import {
  type Arrival,
  type Arrivals,
  arrivalFigures,
  BASELINE_STREAMS,
  Helper,
  readStreamMemory,
  settle,
  type StreamMemory,
  StreamHolders,
  streamRequest,
} from './stream-holders';

const ROWS = [{ productId: 'sku-burger', name: 'Burger', quantity: 1, unitPrice: 1290 }];
/** Register keys a location's streams share (SSE_MAX_STREAMS_PER_SESSION is raised for the benchmark). */
const KEYS = 10;
const WARMUP = 2;
const epochNow = () => performance.timeOrigin + performance.now();
const portOf = (api: ApiNode) => Number(new URL(api.origin).port);
const p50 = (values: number[]) =>
  round(
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    ),
  );
const placed = (number: number) => `"number":${number},"state":"PLACED"`;

/**
 * Submission to arrival over every stream and submission (the last stream's: median over
 * submissions), with each Redis process's CPU and the cost of one.
 */
export interface FanOutLevel extends Arrival {
  streams: number;
  apiNodes: number;
  submissions: number;
  redisCpu: CpuShare[];
  cost?: Cost;
}

export interface StreamsLevel {
  streams: number;
  clientProcesses: number;
  memory: StreamMemory;
  /** Events fanned out, of this many bytes each. */
  events: number;
  frameBytes: number;
  /** The node's own figure per event: the worker's publication to the node's last write, ms. */
  serverFanOutMs: { p50: number; max: number };
  /** The bare loop writing the same frame to as many loopback sockets, ms. */
  floorMs: { p50: number; max: number };
  /** serverFanOut p50 / floor p50. */
  ratio: number;
  /** At the clients: from the submit request (the floor: its loop's start) to arrival. */
  arrival: Arrival;
  floorArrival: Arrival;
  cost?: Cost;
  /** Bare servers holding as many event-stream responses open: Node's http alone, and through Koa. */
  memoryFloors: { server: 'node' | 'koa'; rssPerStreamKiB: number; heapPerStreamKiB: number }[];
}

export interface ChainStreamsLevel {
  streams: number;
  locations: number;
  clientProcesses: number;
  memory: StreamMemory;
  /** Orders created across the chain, `concurrency` at a time, each timed from its create request to its arrivals. */
  events: number;
  concurrency: number;
  arrival: Arrival;
  cost?: Cost;
  memoryFloors?: StreamsLevel['memoryFloors'];
}

/** Orders made and finished by a customer, ready to be submitted. */
const finishedOrders = (customer: CustomerClient, count: number) =>
  inBatches(count, 1, async () => {
    const order = await customer.createOrder(ROWS);
    await customer.finish(order.number);
    return order.number;
  });

async function streamedLocation(deployment: Deployment, name: string) {
  const location = await deployment.admin.createLocation(name);
  const keys = await inBatches(KEYS, 1, (i) =>
    deployment.admin.createServiceSession(location.id, `bench-register-${i}`),
  );
  const customer = new CustomerClient(
    deployment.apis[0]!.baseUrl,
    (await deployment.admin.createCustomerSession(location.id, 1)).apiKey,
  );
  return { keys: keys.map((k) => k.apiKey), customer };
}

export async function measureFanOut(
  backends: Backends,
  options: { levels: number[]; submissions: number; say(line: string): void; label?: string },
): Promise<FanOutLevel[]> {
  const label = options.label ?? '';
  const deployment = await deploy(`${label.trim() ? `${label.trim()}-` : ''}fanout`, backends, { apiCount: 2 });
  const holders = new StreamHolders(2);
  try {
    const { keys, customer } = await streamedLocation(deployment, 'Bench fan-out');
    const register = new RegisterClient({ baseUrl: deployment.apis[0]!.baseUrl, apiKey: keys[0]! });
    const ports = deployment.apis.map(portOf);
    const levels: FanOutLevel[] = [];
    let open = 0;
    for (const level of options.levels) {
      const target = (i: number): Target => ({
        port: ports[i % ports.length]!,
        request: streamRequest(ports[i % ports.length]!, keys[i % KEYS]!),
      });
      await holders.open(Array.from({ length: level - open }, (_, j) => target(open + j)));
      open = level;
      const orders = await finishedOrders(customer, WARMUP + options.submissions);
      const probe = deployment.probe();
      let cpu: ReturnType<typeof measureCpu> | undefined;
      const events: { t0: number; got: Arrivals }[] = [];
      for (const [i, number] of orders.entries()) {
        if (i === WARMUP) {
          await probe.start();
          cpu = measureCpu(redisProcesses(backends));
        }
        const arrived = holders.expect(placed(number), 15_000);
        const t0 = epochNow();
        await customer.submit(number);
        if (i >= WARMUP) events.push({ t0, got: await arrived });
        else await arrived;
      }
      const redisCpu = cpu?.stop() ?? [];
      const cost = await probe.stop(options.submissions);
      // Completed orders are not replayed to the next level's new streams.
      await inBatches(orders.length, 8, (i) => register.updateStatus(orders[i]!, 'COMPLETED'));
      const arrival = arrivalFigures(events);
      levels.push({
        streams: level,
        apiNodes: ports.length,
        submissions: options.submissions,
        ...arrival,
        redisCpu,
        cost,
      });
      options.say(
        `${label}fan-out ${level} streams: p50 ${arrival.p50Ms} ms, p99 ${arrival.p99Ms} ms, ` +
          `last arrival p50 ${arrival.lastP50Ms} ms, missed ${arrival.missed}`,
      );
    }
    return levels;
  } finally {
    holders.stop();
    await deployment.stop().catch(() => undefined);
  }
}

async function fanOutTotals(api: ApiNode): Promise<{ sum: number; count: number }> {
  const samples = await scrapeMetrics(api.origin);
  return { sum: samples.get('pos_fanout_seconds_sum') ?? 0, count: samples.get('pos_fanout_seconds_count') ?? 0 };
}

export async function measureStreams(
  backends: Backends,
  options: { streams: number; clientProcesses: number; events: number; say(line: string): void },
): Promise<StreamsLevel> {
  const { streams } = options;
  const say = (line: string) => options.say(`streams: ${line}`);
  const deployment = await deploy('streams', backends, { apiCount: 1, apiNodeArgs: GC_HOOK, maxStreams: streams });
  const holders = new StreamHolders(options.clientProcesses);
  try {
    const api = deployment.apis[0]!;
    const port = portOf(api);
    const { keys, customer } = await streamedLocation(deployment, 'Bench streams');
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, j) => from + j);
    const memory = await readStreamMemory(
      api,
      streams,
      (from, to) => holders.open(range(from, to).map((i) => ({ port, request: streamRequest(port, keys[i % KEYS]!) }))),
      say,
    );

    // Fan-out: an order submitted by a customer (through the queue and the worker) reaches every stream.
    const orders = await finishedOrders(customer, WARMUP + options.events);
    const probe = deployment.probe();
    const serverMs: number[] = [];
    const events: { t0: number; got: Arrivals }[] = [];
    let frame = '';
    for (const [i, number] of orders.entries()) {
      if (i === WARMUP) await probe.start();
      const before = await fanOutTotals(api);
      const arrived = holders.expect(placed(number));
      const t0 = epochNow();
      const record = await customer.submit(number);
      const got = await arrived;
      const after = await fanOutTotals(api);
      if (i < WARMUP) continue;
      frame = `id: ${number}.0\nevent: order\ndata: ${JSON.stringify(record)}\n\n`;
      if (after.count - before.count === 1) serverMs.push(round((after.sum - before.sum) * 1000, 3));
      events.push({ t0, got });
    }
    const cost = await probe.stop(options.events);
    say(`fan-out p50 ${p50(serverMs)} ms on the node (publish to last write)`);
    await holders.close();

    // The floor: the same frame, written by a bare process to as many loopback sockets.
    const floor = new Helper<FloorCommand, FloorReply>('bench/bare/socket-floor.ts');
    const floorMs: number[] = [];
    const floorEvents: { t0: number; got: Arrivals }[] = [];
    try {
      const floorPort = ((await floor.first) as { port: number }).port;
      await holders.open(range(0, streams).map(() => ({ port: floorPort })));
      for (let i = 0; i < WARMUP + options.events; i++) {
        const arrived = holders.expect(frame.slice(frame.indexOf('data: ')));
        const reply = (await floor.ask({ cmd: 'write', frame })) as { startedAt: number; loopMs: number };
        const got = await arrived;
        if (i < WARMUP) continue;
        floorMs.push(round(reply.loopMs, 3));
        floorEvents.push({ t0: reply.startedAt, got });
      }
    } finally {
      await holders.close();
      floor.stop();
    }
    say(`floor p50 ${p50(floorMs)} ms (a bare loop writing ${Buffer.byteLength(frame)} bytes to ${streams} sockets)`);
    const memoryFloors = [
      await heldFloor('node', holders, streams, say),
      await heldFloor('koa', holders, streams, say),
    ];
    const figures = (values: number[]) => ({ p50: p50(values), max: round(Math.max(0, ...values)) });
    return {
      streams,
      clientProcesses: options.clientProcesses,
      memory,
      events: options.events,
      frameBytes: Buffer.byteLength(frame),
      serverFanOutMs: figures(serverMs),
      floorMs: figures(floorMs),
      ratio: p50(floorMs) > 0 ? round(p50(serverMs) / p50(floorMs)) : 0,
      arrival: arrivalFigures(events),
      floorArrival: arrivalFigures(floorEvents),
      cost,
      memoryFloors,
    };
  } finally {
    holders.stop();
    await deployment.stop().catch(() => undefined);
  }
}

/** A memory floor: a bare server (bare/held-streams.ts) holding as many stream responses, read the same way. */
async function heldFloor(
  server: 'node' | 'koa',
  holders: StreamHolders,
  streams: number,
  say: (line: string) => void,
): Promise<StreamsLevel['memoryFloors'][number]> {
  const held = new Helper<'measure', HeldReply>('bench/bare/held-streams.ts', [server], ['--expose-gc']);
  try {
    const port = ((await held.first) as { port: number }).port;
    const openHeld = async (count: number) => {
      await holders.open(
        Array.from({ length: count }, () => ({ port, request: streamRequest(port, 'none', '/stream') })),
      );
      await settle();
      return (await held.ask('measure')) as { open: number; rss: number; heapUsed: number };
    };
    const base = await openHeld(BASELINE_STREAMS);
    const all = await openHeld(streams - BASELINE_STREAMS);
    const perStream = (bytes: number) => round(bytes / (all.open - base.open) / 1024, 1);
    const floor = {
      server,
      rssPerStreamKiB: perStream(all.rss - base.rss),
      heapPerStreamKiB: perStream(all.heapUsed - base.heapUsed),
    };
    say(
      `a bare ${server} server holding ${all.open} streams: ` +
        `${floor.rssPerStreamKiB} KiB RSS, ` +
        `${floor.heapPerStreamKiB} KiB heap per stream`,
    );
    return floor;
  } finally {
    await holders.close();
    held.stop();
  }
}

/**
 * The chain's locations and keys, written straight into the database: through
 * the admin API the stand-in timed out at about 3,900.
 */
async function seedLocations(
  mongoUrl: string,
  deployment: Deployment,
  count: number,
): Promise<{ id: string; apiKey: string }[]> {
  const client = new MongoClient(mongoUrl);
  try {
    const c = collections(client.db(deployment.db));
    const now = new Date();
    const seeded = Array.from({ length: count }, (_, i) => ({
      id: newId(),
      apiKey: generateApiKey(deployment.apiKeySecret),
      name: `Bench chain ${i + 1}`,
    }));
    for (let from = 0; from < count; from += 500) {
      const batch = seeded.slice(from, from + 500);
      await c.locations.insertMany(
        batch.map((l): LocationDoc => ({
          _id: l.id,
          name: l.name,
          failureThreshold: 3,
          orderSeq: 0,
          commandSeq: 0,
          createdAt: now,
        })),
      );
      await c.sessions.insertMany(
        batch.map((l): SessionDoc => ({
          _id: newId(),
          createdAt: now,
          type: 'SERVICE',
          locationId: l.id,
          deviceId: 'bench-chain',
          keyHash: hashApiKey(l.apiKey),
        })),
      );
    }
    return seeded;
  } finally {
    await client.close();
  }
}

export async function measureChainStreams(
  backends: Backends,
  options: {
    streams: number;
    locations: number;
    clientProcesses: number;
    events: number;
    concurrency: number;
    say(line: string): void;
  },
): Promise<ChainStreamsLevel> {
  const { streams, locations: locationCount } = options;
  const say = (line: string) => options.say(`chain streams: ${line}`);
  const perLocation = Math.max(1, Math.round(streams / locationCount));
  // The stand-in slows as sessions and locations pile up: its reads may outlast the default MONGO_TIMEOUT.
  const deployment = await deploy('chain-streams', backends, {
    apiCount: 1,
    apiNodeArgs: GC_HOOK,
    maxStreams: streams,
    env: { MONGO_TIMEOUT: '30s' },
  });
  const holders = new StreamHolders(options.clientProcesses);
  try {
    const api = deployment.apis[0]!;
    const port = portOf(api);
    const locations = await seedLocations(backends.mongoUrl, deployment, locationCount);
    // Stream i belongs to location floor(i / perLocation): a location's streams are neighbours.
    const target = (i: number): Target => ({
      port,
      request: streamRequest(port, locations[Math.floor(i / perLocation) % locationCount]!.apiKey),
    });
    const memory = await readStreamMemory(
      api,
      streams,
      (from, to) => holders.open(Array.from({ length: to - from }, (_, j) => target(from + j))),
      say,
    );

    // Fan-out while orders flow: orders created at locations spread over the chain, several at once.
    const stride = Math.max(1, Math.floor(locationCount / options.events));
    const warmup = Math.min(20, options.events);
    const startedAt: number[] = [];
    const flow = (from: number, to: number) =>
      inBatches(to - from, options.concurrency, async (i) => {
        startedAt[from + i] = epochNow();
        await deployment.admin.createOrder(locations[((from + i) * stride) % locationCount]!.id, [
          { ...ROWS[0]!, productId: `fan${from + i}` },
        ]);
      });
    await flow(0, warmup);
    await holders.watch('fan');
    const probe = deployment.probe();
    await probe.start();
    await flow(warmup, warmup + options.events);
    // the last events' frames are on their way
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const cost = await probe.stop(options.events);
    const seen = await holders.collect();
    const events = Array.from({ length: options.events }, (_, j) => {
      const arrivals = seen.get(`fan${warmup + j}`) ?? [];
      return { t0: startedAt[warmup + j]!, got: { arrivals, missed: Math.max(0, perLocation - arrivals.length) } };
    });
    const arrival = arrivalFigures(events);
    say(
      `fan-out while ${options.events} orders flow (${options.concurrency} at a time): p50 ` +
        `${arrival.p50Ms} ms, p99 ${arrival.p99Ms} ms, missed ${arrival.missed}`,
    );
    return {
      streams,
      locations: locationCount,
      clientProcesses: options.clientProcesses,
      memory,
      events: options.events,
      concurrency: options.concurrency,
      arrival,
      cost,
    };
  } finally {
    holders.stop();
    await deployment.stop().catch(() => undefined);
  }
}
