/**
 * Every event, at least once (docs/webhooks.md#deliveries): orders, commands and pauses flow
 * through two API nodes and two workers (child processes, on a Redis of this file's own) while
 * each is killed with SIGKILL at random moments and restarted, and Redis is flushed once (while
 * the endpoint fails, so that deliveries wait in the queue the flush empties). A real
 * receiver verifies every delivery with `standardwebhooks`; one consumer pages the feed throughout,
 * another only at the end. Afterwards every event implied by an acknowledged change has reached
 * the receiver (once after deduplication by webhook-id), the feed lists each event once, each
 * order's events in the order of its writes, and both consumers hold exactly the feed.
 */
import { randomInt } from 'node:crypto';
import Redis from 'ioredis';
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { FeedEvent } from '@pos/shared/schemas/feed-event';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { startRedisServer } from '../../scripts/embedded/redis-server';
import { call, sampleRows } from '../support/http';
import { outboxesRelayed } from '../support/outboxes';
import { stopRoles } from '../support/roles';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { eventually, pause } from '../support/wait';
import { Receiver, startReceiver } from '../support/webhook-receiver';

type Role = ChildRole & { port?: number };
const RUN_MS = 20_000;
const TYPES = [
  'order.placed',
  'order.completed',
  'order.aborted',
  'command.created',
  'command.acknowledged',
  'location.paused',
  'location.resumed',
];

/** An event an acknowledged change implied: its type, location, and what it is about. */
interface Expected {
  type: string;
  locationId: string;
  /** The order's or command's number; absent for a location's event. */
  number?: number;
}
const keyOf = (e: Expected) => `${e.type} ${e.locationId} ${e.number ?? ''}`;
function keyOfEvent(event: FeedEvent): string {
  const data = event.data as { locationId: string; order?: { number: number }; command?: { number: number } };
  return keyOf({ type: event.type, locationId: data.locationId, number: data.order?.number ?? data.command?.number });
}

describe('every event through killed processes and a flushed Redis', () => {
  let redisServer: ChildServer;
  let env: StackEnv;
  const apis: Role[] = [];
  const workers: Role[] = [];
  let receiver: Receiver;

  beforeAll(async () => {
    redisServer = await startRedisServer();
    env = stackEnv({
      REDIS_URL: redisServer.url,
      JOB_TIMEOUT: '3s',
      JOB_LOCK_DURATION: '2s',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_RETRY_SCHEDULE: Array(60).fill('500ms').join(','),
      WEBHOOK_CIRCUIT_FAILURES: '100000',
    });
    apis.push(...(await Promise.all([spawnRole('api', env), spawnRole('api', env)])));
    workers.push(...(await Promise.all([spawnRole('worker', env), spawnRole('worker', env)])));
    receiver = await startReceiver();
  }, 60_000);
  afterAll(async () => {
    await stopRoles([...apis, ...workers], 'kill');
    await receiver?.close();
    await redisServer?.stop();
  });

  it('delivers every event implied by an acknowledged change, and the feed lists each once, in order', async () => {
    const origin = () => `http://127.0.0.1:${apis[randomInt(apis.length)]!.port}`;
    const admin = () => new AdminClient(origin(), env.ADMIN_TOKEN!);
    const locations = await Promise.all(
      ['North', 'South', 'East'].map(async (name) => (await admin().createLocation(name, 1000)).id),
    );
    const keys = new Map(
      await Promise.all(
        locations.map(async (id) => [id, (await admin().createServiceSession(id, 'register')).apiKey] as const),
      ),
    );
    const subscription = await admin().createWebhook({ url: receiver.url, events: TYPES });
    receiver.secrets.push(subscription.secret);
    // The endpoint fails until Redis has been flushed: the deliveries meanwhile wait in the queue the flush empties.
    await receiver.setMode({ status: 503 });

    const expected: Expected[] = [];
    let running = true;
    /** The answer's status, or 0 when the request got no answer (its node was killed). */
    const send = async (
      method: string,
      path: string,
      options: Parameters<typeof call>[2],
    ): Promise<{ status: number; body: unknown }> => {
      try {
        const res = await call(method, `${origin()}${path}`, options);
        return { status: res.status, body: res.status < 300 && res.text ? res.json() : undefined };
      } catch {
        return { status: 0, body: undefined };
      }
    };
    const admined = (method: string, path: string, body?: unknown) =>
      send(method, path, { headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` }, body });

    // Each location's register and operator, one change at a time; only what was answered is expected.
    const traffic = locations.map(async (locationId) => {
      const apiKey = keys.get(locationId)!;
      let paused: boolean | undefined = false;
      while (running) {
        const created = await admined('POST', `/admin/v1/locations/${locationId}/orders`, { rows: sampleRows });
        if (created.status === 201) {
          const number = (created.body as { number: number }).number;
          expected.push({ type: 'order.placed', locationId, number });
          const state = randomInt(3) === 0 ? 'ABORTED' : 'COMPLETED';
          const done = await send('PUT', `/api/v1/orders/${number}/statusupdate`, {
            apiKey,
            body: { newState: state },
          });
          if (done.status === 200)
            expected.push({ type: state === 'ABORTED' ? 'order.aborted' : 'order.completed', locationId, number });
        }
        const command = await admined('POST', `/admin/v1/locations/${locationId}/commands`, { kind: 'EXPORT_DATA' });
        if (command.status === 201) {
          const number = (command.body as { number: number }).number;
          expected.push({ type: 'command.created', locationId, number });
          if ((await send('DELETE', `/api/v1/commands/${number}`, { apiKey })).status === 200)
            expected.push({ type: 'command.acknowledged', locationId, number });
        }
        if (randomInt(4) === 0) {
          const change = await admined(
            paused === false ? 'PUT' : 'DELETE',
            `/admin/v1/locations/${locationId}/pause`,
            paused === false ? { reason: 'chaos' } : undefined,
          );
          if (change.status !== 200)
            paused = undefined; // not known: no resume is expected until one is answered
          else if (paused === false) {
            expected.push({ type: 'location.paused', locationId });
            paused = true;
          } else {
            if (paused === true) expected.push({ type: 'location.resumed', locationId });
            paused = false;
          }
        }
      }
    });

    // A consumer that pages the feed throughout, from its start.
    const followed: FeedEvent[] = [];
    const follow = async (until: () => boolean) => {
      for (;;) {
        try {
          const page = await admin().listEvents({ limit: 50, after: followed.at(-1)?.id });
          followed.push(...page);
          if (page.length === 50) continue;
          if (until()) return;
        } catch {
          // its node was killed: the next request goes to another
        }
        await pause(150);
      }
    };
    const consumer = follow(() => !running);

    // The chaos: a node or a worker killed every 2 to 4 s, and restarted; Redis flushed once, midway.
    const flusher = new Redis(redisServer.url);
    const started = Date.now();
    let flushed = false;
    while (Date.now() - started < RUN_MS) {
      await pause(2_000 + randomInt(2_000));
      if (!flushed && Date.now() - started > RUN_MS / 2) {
        await flusher.flushall();
        flushed = true;
        await receiver.setMode({ status: 204 });
        continue;
      }
      const pool = randomInt(2) === 0 ? apis : workers;
      const victim = pool.splice(randomInt(pool.length), 1)[0]!;
      await victim.kill();
      pool.push(await spawnRole(pool === apis ? 'api' : 'worker', env));
    }
    flusher.disconnect();
    running = false;
    await Promise.all(traffic);

    // Every expected event reaches the receiver, verified; each event once after dedupe by webhook-id.
    const counts = (keys: string[]) => keys.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>());
    const wanted = counts(expected.map(keyOf));
    const missing = () => {
      const events = new Map(
        [...receiver.delivered().values()].map((d) => [
          JSON.parse(d.body).id as string,
          JSON.parse(d.body) as FeedEvent,
        ]),
      );
      const got = counts([...events.values()].map(keyOfEvent));
      return [...wanted].filter(([key, n]) => (got.get(key) ?? 0) < n).map(([key]) => key);
    };
    await eventually(
      () => missing().length === 0,
      'every expected event delivered',
      90_000,
      () => `missing: ${missing().slice(0, 10).join('; ')}`,
    );
    const delivered = [...receiver.delivered().values()];
    expect(delivered.every((d) => d.verifiedBy.length > 0)).toBe(true);
    const webhookIdsOf = new Map<string, Set<string>>();
    for (const d of delivered)
      webhookIdsOf.set(JSON.parse(d.body).id, (webhookIdsOf.get(JSON.parse(d.body).id) ?? new Set()).add(d.id));
    expect([...webhookIdsOf.values()].every((ids) => ids.size === 1)).toBe(true);

    // The feed: each event once, every expected one in it, each order's events in its writes' order.
    await consumer;
    // (a relaying worker killed between a transition's write and its next pass leaves the events
    // in the order, for the worker that takes the lease over, seconds later)
    await outboxesRelayed(env, 90_000);
    const feed = await admin().allEvents();
    expect(new Set(feed.map((e) => e.id)).size).toBe(feed.length);
    const inFeed = counts(feed.map(keyOfEvent));
    expect([...wanted].filter(([key, n]) => (inFeed.get(key) ?? 0) < n)).toEqual([]);
    const versions = new Map<string, number>();
    for (const event of feed) {
      const order = (event.data as { order?: { number: number; version: number } }).order;
      if (!order) continue;
      const key = `${(event.data as { locationId: string }).locationId}:${order.number}`;
      expect(order.version).toBeGreaterThan(versions.get(key) ?? -1);
      versions.set(key, order.version);
    }
    // every delivered event is in the feed, and the two consumers hold exactly the feed
    expect([...webhookIdsOf.keys()].filter((id) => !feed.some((e) => e.id === id))).toEqual([]);
    await follow(() => true);
    expect(followed.map((e) => e.id)).toEqual(feed.map((e) => e.id));
    expect((await admin().allEvents()).map((e) => e.id)).toEqual(feed.map((e) => e.id));
  }, 240_000);
});
