/**
 * The event relay and the events a transition's write hands it (services/worker/src/outbox: the
 * one writer of order transitions, OrderWriter, whoever holds the lease), on
 * MongoDB (the stand-in, or MONGO_URL) and Redis: while a worker relays, its writes take their
 * order's events over, its pass records them, and the order's next write removes them (the order
 * is written once per change); a worker that does not relay leaves them to the relay; a relay that
 * takes the lease over records at once what the one before had been handed and not recorded.
 */
import Redis from 'ioredis';
import { MongoClient, type Db } from 'mongodb';
import { loadConfig } from '@pos/shared/config';
import { orderOutbox } from '@pos/shared/events/outbox';
import { createLogger } from '@pos/shared/log';
import type { OrderDoc } from '@pos/shared/store/documents';
import { ensureIndexes } from '@pos/shared/store/mongo';
import { outboxes } from '@pos/shared/store/outboxes';
import { createRepos, type Repos } from '@pos/shared/store/repos';
import { createWebhooks, type WebhookWiring } from '@pos/shared/webhooks/wiring';
import { createWorkerMetrics } from '@pos/worker/metrics';
import { OrderWriter } from '@pos/worker/outbox/order-writer';
import { OutboxRelay } from '@pos/worker/outbox/relay';

const LOCATION = 'loc-relay';

describe('the event relay', () => {
  let mongo: MongoClient;
  let db: Db;
  let repos: Repos;
  let redis: Redis;
  let webhooks: WebhookWiring;
  let number = 0;
  const relays: OutboxRelay[] = [];
  const log = createLogger('silent', 'event-relay-test');

  beforeAll(async () => {
    mongo = await MongoClient.connect(process.env.TEST_MONGO_URL!);
    db = mongo.db(`event-relay-${process.pid}`);
    await ensureIndexes(db);
    repos = createRepos(db);
    redis = new Redis(process.env.TEST_REDIS_URL!);
    const config = loadConfig({ REDIS_URL: process.env.TEST_REDIS_URL, MONGO_URL: process.env.TEST_MONGO_URL, REDIS_PREFIX: `event-relay-${process.pid}` });
    webhooks = createWebhooks({ repos, redis, queueRedis: redis, redisConfig: config.redis, webhooks: config.webhooks, registry: createWorkerMetrics(() => 0).registry, log });
  });
  // (each test's relays give the lease back)
  afterEach(() => Promise.all(relays.splice(0).map((relay) => relay.close())));
  afterAll(async () => {
    await webhooks.queue.close();
    redis.disconnect();
    await Promise.all(['orders', 'events', 'leases'].map((name) => db.collection(name).deleteMany({})));
    await mongo.close();
  });

  /** A relay as a worker runs it (not started: the tests make its passes); `onRead` sees each read of the outboxes, `offered` gets the ids of the events it gives the log. */
  function relay(onRead?: () => void, offered?: string[]): OutboxRelay {
    const reader = outboxes(db);
    const made = new OutboxRelay({
      outboxes: { held: (limit, dueBy) => (onRead?.(), reader.held(limit, dueBy)) },
      events: { owing: (...args) => repos.events.owing(...args), record: (events, now) => (offered?.push(...events.map((event) => event.id)), repos.events.record(events, now)) },
      leases: repos.leases,
      fanOut: webhooks.fanOut,
      deliveries: webhooks.deliveries,
      redis,
      prefix: `event-relay-${process.pid}`,
      metrics: createWorkerMetrics(() => 0).relay,
      log,
    });
    relays.push(made);
    return made;
  }
  const orders = () => db.collection<OrderDoc>('orders');
  const stored = async (id: string) => (await orders().findOne({ _id: id }))!;
  const inLog = async (ids: string[]) => (await repos.events.findByEventIds(ids)).size;
  /** A failure report as a transition's worker writes it, with that worker's relay; handed over when taken. */
  async function report(order: OrderDoc, by: OutboxRelay): Promise<OrderDoc> {
    const now = new Date();
    return (await new OrderWriter(repos.orders, by.taken).write(order, { state: 'PLACED', failureCount: order.failureCount + 1 }, `job-${order._id}-${order.version}`, now))!;
  }
  const newOrder = () => repos.orders.insert({ locationId: LOCATION, number: ++number, state: 'PLACED', rows: [] }, new Date(), (after) => orderOutbox(after, new Date()));

  it("records what its worker's writes take over, and the order's next write removes them: no write of the relay's", async () => {
    const relaying = relay();
    await relaying.pass(); // takes the lease
    let order = await newOrder(); // an order's creation leaves its event to the relay
    await relaying.pass();
    order = await stored(order._id);
    expect(order.outbox).toEqual({});

    order = await report(order, relaying);
    const taken = Object.keys(order.outbox!);
    expect(taken.length).toBe(2); // placed again, failed
    expect((await stored(order._id)).outboxCount).toBe(0); // not the relay's to read before its due time
    expect(await inLog(taken)).toBe(0);
    await relaying.pass();
    expect(await inLog(taken)).toBe(2);
    const unchanged = await stored(order._id);
    expect(Object.keys(unchanged.outbox!).sort()).toEqual([...taken].sort()); // the relay did not write it
    expect(unchanged.version).toBe(order.version);

    order = await report(order, relaying);
    const kept = Object.keys((await stored(order._id)).outbox!);
    expect(kept.length).toBe(2);
    expect(kept.filter((id) => taken.includes(id))).toEqual([]); // the first report's, recorded, are gone
    await relaying.pass();
    expect(await inLog(kept)).toBe(2);
  });

  it('leaves the events of a worker that does not relay to the relay, which removes them', async () => {
    const relaying = relay();
    await relaying.pass();
    const other = relay(); // never holds the lease
    await other.pass();
    let order = await newOrder();
    await relaying.pass();
    order = await report(await stored(order._id), other);
    const left = Object.keys(order.outbox!);
    expect((await stored(order._id)).outboxCount).toBe(2);
    await relaying.pass();
    expect(await inLog(left)).toBe(2);
    expect(await stored(order._id)).toMatchObject({ outbox: {}, outboxCount: 0 });
  });

  it('clears without recording again the events a write kept that it had taken over and its relay recorded', async () => {
    const offered: string[] = [];
    const relaying = relay(undefined, offered);
    await relaying.pass();
    const other = relay(); // never holds the lease: its writes leave their events to the relay
    await other.pass();
    let order = await newOrder();
    await relaying.pass();
    order = await report(await stored(order._id), relaying);
    const taken = Object.keys(order.outbox!);
    await relaying.pass();
    expect(await inLog(taken)).toBe(2);

    order = await report(order, other); // keeps the two it does not know recorded
    const left = Object.keys(order.outbox!).filter((id) => !taken.includes(id));
    expect(Object.keys(order.outbox!).length).toBe(4);
    offered.length = 0;
    await relaying.pass();
    expect(offered.sort()).toEqual([...left].sort());
    expect(await inLog(left)).toBe(2);
    expect(await stored(order._id)).toMatchObject({ outbox: {}, outboxCount: 0 });
  });

  it('while its own writes hand events over, reads the outboxes only after a pause from an empty read, and records what they hold then', async () => {
    let reads = 0;
    const relaying = relay(() => reads++);
    await relaying.pass(); // takes the lease, reading every outbox
    let order = await stored((await newOrder())._id);
    await relaying.pass();
    let passes = 0;
    reads = 0;
    const taken: string[] = [];
    for (const until = Date.now() + 1_000; Date.now() < until; passes++) {
      order = await report(order, relaying);
      taken.push(...Object.keys(order.outbox!).filter((id) => !taken.includes(id)));
      await relaying.pass();
    }
    expect(await inLog(taken)).toBe(taken.length); // every pass recorded what it was handed
    // empty reads put the next off 50 ms, then 100, 200... (every pass read before)
    expect(reads).toBeLessThanOrEqual(Math.max(6, passes / 3));

    const left = await newOrder(); // an order's creation leaves its event to the relay
    const [placed] = Object.keys((await stored(left._id)).outbox!);
    for (const until = Date.now() + 3_000; (await inLog([placed!])) === 0 && Date.now() < until; ) {
      order = await report(order, relaying);
      await relaying.pass();
    }
    expect(await inLog([placed!])).toBe(1);
  });

  /** A report written by the worker that relays (`first`): its order's events taken over and handed to `first`'s next pass. */
  async function handedOver(): Promise<{ first: OutboxRelay; order: OrderDoc; taken: string[] }> {
    const first = relay();
    await first.pass(); // takes the lease
    const created = await newOrder();
    await first.pass();
    const order = await report(await stored(created._id), first);
    return { first, order, taken: Object.keys(order.outbox!) };
  }

  it('records at once, when it takes the lease, what a relay that died before its pass had been handed', async () => {
    const { first, order, taken } = await handedOver();
    // it dies before its next pass (never closed): what it was handed is only in the order, and its lease lapses
    relays.splice(relays.indexOf(first), 1);
    await db.collection('leases').updateMany({}, { $set: { until: new Date(0) } });
    expect(await inLog(taken)).toBe(0);

    const next = relay();
    await next.pass();
    expect(await inLog(taken)).toBe(2);
    const cleared = await stored(order._id);
    expect([cleared.outbox, cleared.outboxDue]).toEqual([{}, undefined]);
  });

  it('records, as it closes, what its last writes handed it; closed, its writes leave their events to the relay that takes the lease', async () => {
    const { first, order: handed, taken } = await handedOver();
    await first.close();
    expect(await inLog(taken)).toBe(2);

    const order = await report(await stored(handed._id), first); // a transition finishing after its relay closed
    const left = Object.keys(order.outbox!).filter((id) => !taken.includes(id));
    expect([left.length, (await stored(order._id)).outboxCount]).toEqual([2, 2]);
    const next = relay();
    await next.pass(); // the lease was given back: taken at once
    expect(await inLog(left)).toBe(2);
    expect(await stored(order._id)).toMatchObject({ outbox: {}, outboxCount: 0 });
  });
});
