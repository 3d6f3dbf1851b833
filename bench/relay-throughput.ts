/**
 * What one event relay sustains (docs/webhooks.md): a backlog of events waiting in order outboxes,
 * as failure reports leave them (each a new version of its order, back in PLACED), relayed by one
 * relay's passes until none is left, on a fresh database of as many orders as the status updates
 * run on (the stand-in's writes slow as a collection grows); first with no
 * subscription (the events recorded), then with one subscription to
 * every event (each event's delivery queued too; nothing consumes the queue). The report puts it
 * beside the events a second the service produced at capacity in the same run.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { SAMPLE_ROWS } from '../scripts/embedded/sample-rows';
import { loadConfig } from '@pos/shared/config';
import { orderOutbox } from '@pos/shared/events/outbox';
import { createLogger } from '@pos/shared/log';
import type { OrderDoc } from '@pos/shared/store/documents';
import { ensureIndexes, recordId } from '@pos/shared/store/mongo';
import { outboxAfter, outboxes } from '@pos/shared/store/outboxes';
import { createRepos } from '@pos/shared/store/repos';
import { WEBHOOK_EVENT_TYPES } from '@pos/shared/webhooks/event-types';
import { createWebhooks } from '@pos/shared/webhooks/wiring';
import { createWorkerMetrics } from '@pos/worker/metrics';
import { OutboxRelay } from '@pos/worker/outbox/relay';
import type { Backends } from './deployment';
import { round } from './statistics';

export interface RelayRun {
  subscriptions: number;
  events: number;
  passes: number;
  seconds: number;
  eventsPerSecond: number;
}

export interface RelayThroughput {
  /** Orders in the backlog, each holding the events of EVENTS_PER_ORDER versions. */
  orders: number;
  /** The events one failure report records (a status update of the bench's status runs). */
  eventsPerReport: number;
  runs: RelayRun[];
}

const SEED_CHUNK = 500;
const EVENTS_PER_ORDER = 8;

/** An order's versions: placed, then failure reports, each leaving it in PLACED. */
function versions(locationId: string, number: number, count: number, now: Date): OrderDoc[] {
  const rows = SAMPLE_ROWS.map((row, i) => ({ ...row, rowNumber: i + 1 }));
  const base = {
    _id: recordId(locationId, number),
    locationId,
    number,
    rows,
    appliedJobs: [],
    guestCount: 1,
    createdAt: now,
    updatedAt: now,
    orderTime: now,
  };
  return Array.from({ length: count }, (_, v): OrderDoc => ({
    ...base,
    state: 'PLACED',
    version: v + 1,
    failureCount: v,
  }));
}

/** Orders as their writes leave them: each holding the events of its first EVENTS_PER_ORDER versions. */
function backlog(locationId: string, orders: number): OrderDoc[] {
  const now = new Date();
  return Array.from({ length: orders }, (_, i) => {
    const written = versions(locationId, i + 1, EVENTS_PER_ORDER, now);
    return {
      ...written.at(-1)!,
      ...outboxAfter(
        {},
        written.flatMap((version) => orderOutbox(version, now)),
      ),
    };
  });
}

async function relayOnce(backends: Backends, orders: number, subscribed: boolean): Promise<RelayRun> {
  const name = `bench-relay-${randomBytes(4).toString('hex')}`;
  const mongo = await MongoClient.connect(backends.mongoUrl);
  const db = mongo.db(name);
  const log = createLogger('silent', 'bench-relay');
  const config = loadConfig({
    REDIS_URL: backends.redisUrl,
    MONGO_URL: backends.mongoUrl,
    REDIS_PREFIX: name,
    WEBHOOK_MAX_PENDING: String(orders * 4),
  });
  const registry = createWorkerMetrics(() => 0);
  const webhooks = createWebhooks({
    repos: createRepos(db),
    redis: backends.redis,
    queueRedis: backends.redis,
    redisConfig: config.redis,
    webhooks: config.webhooks,
    registry: registry.registry,
    log,
  });
  try {
    await ensureIndexes(db);
    const repos = createRepos(db);
    const locationId = `loc-${name}`;
    if (subscribed) {
      const now = new Date();
      // (never delivered here: its secret need not open)
      await repos.webhooks.create({
        _id: `sub-${name}`,
        url: 'http://127.0.0.1:9/hooks',
        events: [...WEBHOOK_EVENT_TYPES],
        secret: 'unused',
        createdAt: now,
        updatedAt: now,
      });
    }
    const docs = backlog(locationId, orders);
    for (let i = 0; i < docs.length; i += SEED_CHUNK)
      await db.collection<OrderDoc>('orders').insertMany(docs.slice(i, i + SEED_CHUNK));
    const events = docs.reduce((sum, doc) => sum + Object.keys(doc.outbox ?? {}).length, 0);
    const relay = new OutboxRelay({
      outboxes: outboxes(db),
      events: repos.events,
      leases: repos.leases,
      fanOut: webhooks.fanOut,
      deliveries: webhooks.deliveries,
      redis: backends.redis,
      prefix: name,
      metrics: registry.relay,
      log,
    });
    const started = process.hrtime.bigint();
    let passes = 0;
    for (let more = true; more; passes++) more = (await relay.pass()).more;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await relay.close();
    const left = await db.collection('orders').countDocuments({ outboxCount: { $gt: 0 } });
    if (left > 0) throw new Error(`the relay left ${left} orders holding events`);
    return {
      subscriptions: subscribed ? 1 : 0,
      events,
      passes,
      seconds: round(seconds, 2),
      eventsPerSecond: round(events / seconds, 0),
    };
  } finally {
    await webhooks.queue.obliterate({ force: true }).catch(() => undefined);
    await webhooks.queue.close();
    await db.dropDatabase().catch(() => undefined);
    await mongo.close();
  }
}

export async function measureRelay(
  backends: Backends,
  options: { orders: number; say(line: string): void },
): Promise<RelayThroughput> {
  const runs: RelayRun[] = [];
  for (const subscribed of [false, true]) {
    const run = await relayOnce(backends, options.orders, subscribed);
    options.say(
      `relay, ${run.subscriptions} subscription(s): ${run.events} events in ` +
        `${run.passes} passes, ${run.seconds} s: ${run.eventsPerSecond} events/s`,
    );
    runs.push(run);
  }
  const [, reported] = versions('loc', 1, 2, new Date());
  return { orders: options.orders, eventsPerReport: orderOutbox(reported!, new Date()).length, runs };
}
