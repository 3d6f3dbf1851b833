/**
 * The event relay (services/worker/src/outbox) on MongoDB (the stand-in, or MONGO_URL) and Redis:
 * a pass records what the writes left in the outboxes and removes exactly that; a document a 0.5.0
 * worker took over is read at once; a relay that stops gives its lease back, so the next takes it
 * at its first pass (also when its pass hangs on the database), and one killed is taken over once
 * its lease lapses.
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
    const config = loadConfig({
      REDIS_URL: process.env.TEST_REDIS_URL,
      MONGO_URL: process.env.TEST_MONGO_URL,
      REDIS_PREFIX: `event-relay-${process.pid}`,
    });
    webhooks = createWebhooks({
      repos,
      redis,
      queueRedis: redis,
      redisConfig: config.redis,
      webhooks: config.webhooks,
      registry: createWorkerMetrics(() => 0).registry,
      log,
    });
  });
  // (each test's relays give the lease back)
  afterEach(() => Promise.all(relays.splice(0).map((relay) => relay.close())));
  afterAll(async () => {
    await webhooks.queue.close();
    redis.disconnect();
    await Promise.all(['orders', 'events', 'leases'].map((name) => db.collection(name).deleteMany({})));
    await mongo.close();
  });

  /**
   * A relay as a worker runs it (not started: the tests make its passes); `offered` gets the ids
   * of the events it gives the log; `stalled`, when given, holds each read of the outboxes until
   * it settles (a database that stopped answering), and is told of each read.
   */
  function relay(
    offered?: string[],
    stalled?: { until: Promise<void>; reading(): void },
    leaseMs?: number,
  ): OutboxRelay {
    const reader = outboxes(db);
    const made = new OutboxRelay({
      outboxes: { held: async (limit) => (stalled && (stalled.reading(), await stalled.until), reader.held(limit)) },
      events: {
        owing: (...args) => repos.events.owing(...args),
        record: (events, now) => (offered?.push(...events.map((event) => event.id)), repos.events.record(events, now)),
      },
      leases: repos.leases,
      fanOut: webhooks.fanOut,
      deliveries: webhooks.deliveries,
      redis,
      prefix: `event-relay-${process.pid}`,
      ...(leaseMs !== undefined && { leaseMs }),
      metrics: createWorkerMetrics(() => 0).relay,
      log,
    });
    relays.push(made);
    return made;
  }
  const orders = () => db.collection<OrderDoc>('orders');
  const stored = async (id: string) => (await orders().findOne({ _id: id }))!;
  const inLog = async (ids: string[]) => (await repos.events.findByEventIds(ids)).size;
  /** A failure report as a transition's worker writes it. */
  async function report(order: OrderDoc): Promise<OrderDoc> {
    return (await new OrderWriter(repos.orders).write(
      order,
      { state: 'PLACED', failureCount: order.failureCount + 1 },
      `job-${order._id}-${order.version}`,
      new Date(),
    ))!;
  }
  /** A new order, as stored: its creation leaves its event to the relay. */
  const newOrder = async () =>
    stored(
      (
        await repos.orders.insert(
          { locationId: LOCATION, number: ++number, state: 'PLACED', rows: [] },
          new Date(),
          (after) => orderOutbox(after, new Date()),
        )
      )._id,
    );

  it('records what the writes left in the outboxes and removes exactly that: a write meanwhile keeps its own', async () => {
    const offered: string[] = [];
    const relaying = relay(offered);
    let order = await newOrder();
    const placed = Object.keys(order.outbox!);
    expect(await relaying.pass()).toMatchObject({ relayed: 1 });
    expect(await inLog(placed)).toBe(1);
    expect(await stored(order._id)).toMatchObject({ outbox: {}, outboxCount: 0 });

    order = await report(await stored(order._id));
    const first = Object.keys(order.outbox!);
    expect([first.length, (await stored(order._id)).outboxCount]).toEqual([2, 2]); // placed again, failed
    // read, then written again before the clear: the second report's events stay
    const held = await outboxes(db).held(10);
    order = await report(order);
    const second = Object.keys(order.outbox!).filter((id) => !first.includes(id));
    await Promise.all(held.map(({ outbox, docs }) => outbox.cleared(docs)));
    expect(Object.keys((await stored(order._id)).outbox!).sort()).toEqual([...second].sort());
    expect((await stored(order._id)).outboxCount).toBe(2);

    offered.length = 0;
    await relaying.pass();
    expect(offered.sort()).toEqual([...second].sort());
    expect(await inLog([...first, ...second])).toBe(2); // (the first two were cleared unrecorded by hand above)
    expect(await stored(order._id)).toMatchObject({ outbox: {}, outboxCount: 0 });
  });

  it("records at once the events a 0.5.0 worker's write took over for its own relay, whatever their due time", async () => {
    const relaying = relay();
    const order = await newOrder();
    const ids = Object.keys(order.outbox!);
    // as 0.5.0 leaves an order whose relay stopped before its pass: outboxCount 0, due in minutes
    await orders().updateOne(
      { _id: order._id },
      { $set: { outboxCount: 0, outboxDue: new Date(Date.now() + 5 * 60_000) } },
    );
    await relaying.pass();
    expect(await inLog(ids)).toBe(1);
    const cleared = await stored(order._id);
    expect([cleared.outbox, cleared.outboxCount, cleared.outboxDue]).toEqual([{}, 0, undefined]);
  });

  it('gives its lease back as it closes, so the next relay goes on at its first pass; a killed one is taken over once seen unrenewed for a lease', async () => {
    const LEASE_MS = 300;
    const first = relay(undefined, undefined, LEASE_MS);
    await first.pass(); // takes the lease
    const waiting = relay(undefined, undefined, LEASE_MS);
    const order = await newOrder();
    expect(await waiting.pass()).toEqual({ relayed: 0, more: false }); // not its lease
    await first.close();
    expect(await waiting.pass()).toMatchObject({ relayed: 1 });
    expect(await inLog(Object.keys(order.outbox!))).toBe(1);

    // it dies (never closed): the next takes its lease over once it has seen it unrenewed for a lease,
    // by its own clock, whatever the lease's `until` says
    relays.splice(relays.indexOf(waiting), 1);
    const next = relay(undefined, undefined, LEASE_MS);
    const later = await newOrder();
    await db.collection('leases').updateMany({}, { $set: { until: new Date(0) } });
    expect((await next.pass()).relayed).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 50));
    expect(await next.pass()).toMatchObject({ relayed: 1 });
    expect(await inLog(Object.keys(later.outbox!))).toBe(1);
  });

  it('stops within seconds when its pass hangs on the database, and gives its lease back to the next relay', async () => {
    let answer = () => {};
    let read = () => {};
    const reading = new Promise<void>((resolve) => (read = resolve));
    const stuck = relay(undefined, {
      until: new Promise<void>((resolve) => (answer = resolve)),
      reading: () => read(),
    });
    const order = await newOrder();
    stuck.start();
    await reading; // its pass holds the lease and waits on the outboxes' read
    await stuck.close(); // while the read still hangs
    const next = relay();
    expect(await next.pass()).toMatchObject({ relayed: 1 });
    expect(await inLog(Object.keys(order.outbox!))).toBe(1);
    answer(); // (the stuck pass then finds it recorded: once)
  });

  it('a closed relay relays no more, even when a pass of it was under way', async () => {
    const relaying = relay();
    await relaying.pass();
    await relaying.close();
    const order = await newOrder();
    expect(await relaying.pass()).toEqual({ relayed: 0, more: false });
    expect((await stored(order._id)).outboxCount).toBe(1);
  });
});
