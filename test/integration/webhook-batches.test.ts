/**
 * Webhook deliveries in batches (services/worker/src/webhooks/batch.ts), on Redis, MongoDB and a
 * receiver over real HTTP that verifies each request with `standardwebhooks`: a relay pass's
 * deliveries to a subscription are one job, each still its own signed POST under its own
 * `webhook-id`; what fails is put back on its schedule and keeps its `webhook-id`; a delivery
 * dropped past the cap is logged, settled and not sent; a pass or a restore queued again adds
 * nothing, and a batch run again sends only what it had not settled. POSTs to an endpoint share
 * kept connections, and one the endpoint closed as it was reused costs no delivery.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Job, Worker } from 'bullmq';
import Redis from 'ioredis';
import { MongoClient, type Db } from 'mongodb';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '@pos/shared/config';
import { orderOutbox } from '@pos/shared/events/outbox';
import { createLogger } from '@pos/shared/log';
import { WEBHOOK_BATCH_JOB, type DeliveryBatchData, type WebhookJobData } from '@pos/shared/queue/webhook-queue';
import type { OrderDoc, WebhookDoc } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import { ensureIndexes } from '@pos/shared/store/mongo';
import { outboxes } from '@pos/shared/store/outboxes';
import { createRepos, type Repos } from '@pos/shared/store/repos';
import { subscriptionsChanged } from '@pos/shared/webhooks/fan-out';
import { newWebhookSecret, SecretBox } from '@pos/shared/webhooks/secrets';
import { createWebhooks, type WebhookWiring } from '@pos/shared/webhooks/wiring';
import { createWorkerMetrics } from '@pos/worker/metrics';
import { OutboxRelay } from '@pos/worker/outbox/relay';
import { succeeded, type DeliveryDeps } from '@pos/worker/webhooks/attempt';
import { deliverBatch } from '@pos/worker/webhooks/batch';
import { startDeliveryWorker } from '@pos/worker/webhooks/delivery';
import { EndpointGuards } from '@pos/worker/webhooks/endpoint-guards';
import { eventually, pause } from '../support/wait';

const SERVER_SECRET = 'batch-test-server-secret';
const log = createLogger('silent', 'webhook-batches');

/** A receiver that checks every request's signature and can fail the next few. */
class Receiver {
  readonly got: { webhookId: string; body: { id: string; type: string } }[] = [];
  failNext = 0;
  private readonly server: http.Server;
  private readonly verifier: Webhook;

  constructor(secret: string) {
    this.verifier = new Webhook(secret);
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const headers = {
          'webhook-id': String(req.headers['webhook-id']),
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        };
        const parsed = this.verifier.verify(body, headers) as { id: string; type: string };
        if (this.failNext > 0) {
          this.failNext -= 1;
          res.writeHead(503).end();
          return;
        }
        this.got.push({ webhookId: headers['webhook-id'], body: parsed });
        res.writeHead(204).end();
      });
    });
  }

  listen(): Promise<string> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`),
      ),
    );
  }

  onConnection(listener: () => void): void {
    this.server.on('connection', listener);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * An endpoint over raw TCP that answers the first request of each connection (204, kept alive) and
 * resets the connection at the start of its second: as an endpoint that closed an idle connection
 * just as the worker reused it.
 */
class OneRequestPerConnection {
  connections = 0;
  answered = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((socket) => {
    this.connections += 1;
    this.sockets.add(socket.on('close', () => this.sockets.delete(socket)));
    let request = '';
    let served = false;
    socket.on('data', (chunk: Buffer) => {
      if (served) return void socket.resetAndDestroy();
      request += chunk.toString();
      const end = request.indexOf('\r\n\r\n');
      const length = Number(/content-length: *(\d+)/i.exec(request)?.[1] ?? 0);
      if (end < 0 || request.length < end + 4 + length) return;
      served = true;
      this.answered += 1;
      socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\nKeep-Alive: timeout=30\r\n\r\n');
    });
    socket.on('error', () => undefined);
  });

  listen(): Promise<string> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`),
      ),
    );
  }

  close(): Promise<void> {
    this.sockets.forEach((socket) => socket.destroy());
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('webhook deliveries in batches', () => {
  let mongo: MongoClient;
  let db: Db;
  let repos: Repos;
  let redis: Redis;
  let webhooks: WebhookWiring;
  let worker: Worker<WebhookJobData> | undefined;
  let workerConnection: Redis | undefined;
  const receivers: Receiver[] = [];
  let number = 0;
  const prefix = `batches-${process.pid}`;
  const config = loadConfig({
    REDIS_URL: process.env.TEST_REDIS_URL,
    MONGO_URL: process.env.TEST_MONGO_URL,
    REDIS_PREFIX: prefix,
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_RETRY_SCHEDULE: '300ms,300ms',
    WEBHOOK_MAX_PENDING: '5',
  });
  const box = new SecretBox(SERVER_SECRET);
  const metrics = createWorkerMetrics(() => 0);

  const deps = (overrides: Partial<typeof config.webhooks> = {}): DeliveryDeps => ({
    webhooks: repos.webhooks,
    deliveries: repos.webhookDeliveries,
    pending: webhooks.deliveries,
    events: repos.events,
    guards: new EndpointGuards({ ...config.webhooks, ...overrides }, succeeded),
    secrets: box,
    metrics: metrics.webhooks,
    log,
  });
  const relay = () =>
    new OutboxRelay({
      outboxes: outboxes(db),
      events: repos.events,
      leases: repos.leases,
      fanOut: webhooks.fanOut,
      deliveries: webhooks.deliveries,
      redis,
      prefix,
      metrics: metrics.relay,
      log,
    });
  /** Orders placed one after another at `locationId`, each with its event in its outbox. */
  const newOrders = async (locationId: string, count: number) => {
    const placed: OrderDoc[] = [];
    for (let i = 0; i < count; i++) {
      placed.push(
        await repos.orders.insert(
          { locationId, number: ++number, state: 'PLACED', rows: [] },
          new Date(),
          (after: OrderDoc) => orderOutbox(after, new Date()),
        ),
      );
      // each its own write time, by which the relay orders events (and the cap finds the oldest)
      await pause(2);
    }
    return placed;
  };
  /**
   * A location of the test's own, with a subscription to its placed orders and a
   * receiver of its own: what another test left behind goes elsewhere.
   */
  const endpoint = async (locationId: string) => {
    const secret = newWebhookSecret();
    const receiver = new Receiver(secret);
    receivers.push(receiver);
    return { receiver, subscription: await subscribe(locationId, await receiver.listen(), secret) };
  };
  const subscribe = async (locationId: string, url: string, secret = newWebhookSecret()) => {
    const now = new Date();
    const subscription: WebhookDoc = {
      _id: newId(),
      url,
      events: ['order.placed'],
      locationIds: [locationId],
      secret: box.seal(secret),
      createdAt: now,
      updatedAt: now,
    };
    await repos.webhooks.create(subscription);
    await subscriptionsChanged(redis, prefix);
    return subscription;
  };
  const batchJobs = async (subscriptionId: string) =>
    (await webhooks.queue.getJobs(['waiting', 'delayed', 'active', 'completed'])).filter(
      (job) => job.name === WEBHOOK_BATCH_JOB && (job.data as DeliveryBatchData).subscriptionId === subscriptionId,
    );
  const owing = async (locationId: string) =>
    (await repos.events.owing({ limit: 1000 })).filter((event) => event.locationId === locationId).length;

  beforeAll(async () => {
    mongo = await MongoClient.connect(process.env.TEST_MONGO_URL!);
    db = mongo.db(prefix);
    await ensureIndexes(db);
    repos = createRepos(db);
    redis = new Redis(process.env.TEST_REDIS_URL!);
    webhooks = createWebhooks({
      repos,
      redis,
      queueRedis: redis,
      redisConfig: config.redis,
      webhooks: config.webhooks,
      registry: metrics.registry,
      log,
    });
  });
  /** A delivery worker as the worker runs it, on a connection of its own. */
  const startWorker = () => {
    workerConnection = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: null });
    worker = startDeliveryWorker(workerConnection, config.redis, config.webhooks, 30_000, deps());
  };
  afterEach(async () => {
    await worker?.close();
    workerConnection?.disconnect();
    worker = undefined;
  });
  afterAll(async () => {
    await webhooks.queue.obliterate({ force: true });
    await webhooks.queue.close();
    redis.disconnect();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await Promise.all(
      ['orders', 'events', 'leases', 'webhooks', 'webhookDeliveries'].map((name) => db.collection(name).deleteMany({})),
    );
    await mongo.close();
  });

  it("queues a pass's deliveries to a subscription as one job, each its own signed POST; a pass or restore again adds nothing", async () => {
    const { receiver, subscription } = await endpoint('loc-one-job');
    const orders = await newOrders('loc-one-job', 4);
    const by = relay();
    await by.pass();
    const jobs = await batchJobs(subscription._id);
    expect(jobs).toHaveLength(1);
    const numbers = (jobs[0]!.data as DeliveryBatchData).items.map(
      (item) => JSON.parse(item.body).data.order.number as number,
    );
    expect(numbers.sort((a, b) => a - b)).toEqual(orders.map((o) => o.number));
    // what still waits is not queued again (the relay's minute restore)
    await webhooks.deliveries.addBatches(
      (jobs[0]!.data as DeliveryBatchData).items.map((item) => ({ ...item, subscriptionId: subscription._id })),
    );
    expect(await batchJobs(subscription._id)).toHaveLength(1);

    startWorker();
    await eventually(
      async () => receiver.got.length === 4 && (await owing('loc-one-job')) === 0,
      'the four delivered and settled',
    );
    expect(new Set(receiver.got.map((g) => g.webhookId)).size).toBe(4);
    expect(await webhooks.deliveries.pending(subscription._id)).toBe(0);
    const log = await db.collection('webhookDeliveries').find({ subscriptionId: subscription._id }).toArray();
    expect(log.map((entry) => [entry.outcome, entry.attempt, entry.locationId])).toEqual(
      Array.from({ length: 4 }, () => ['delivered', 1, 'loc-one-job']),
    );
    await by.close();
  });

  it('puts back what failed, on its schedule, under the same webhook-id, until delivered', async () => {
    const { receiver } = await endpoint('loc-retry');
    receiver.failNext = 2;
    await newOrders('loc-retry', 2);
    const by = relay();
    await by.pass();
    startWorker();
    await eventually(
      async () => receiver.got.length === 2 && (await owing('loc-retry')) === 0,
      'both delivered on their second attempt',
    );
    const entries = await db
      .collection('webhookDeliveries')
      .find({ webhookId: { $in: receiver.got.map((g) => g.webhookId) } })
      .sort({ attempt: 1 })
      .toArray();
    expect(entries.map((entry) => [entry.outcome, entry.attempt])).toEqual([
      ['retrying', 1],
      ['retrying', 1],
      ['delivered', 2],
      ['delivered', 2],
    ]);
    await by.close();
  });

  it('drops the oldest past WEBHOOK_MAX_PENDING: logged with its body, settled, never sent', async () => {
    const { receiver, subscription } = await endpoint('loc-cap');
    const orders = await newOrders('loc-cap', 8);
    const by = relay();
    await by.pass();
    expect(await webhooks.deliveries.pending(subscription._id)).toBe(5);
    const dropped = await db
      .collection('webhookDeliveries')
      .find({ subscriptionId: subscription._id, outcome: 'dropped' })
      .toArray();
    // the oldest: the first three placed
    expect(dropped.map((entry) => JSON.parse(entry.body as string).data.order.number).sort((a, b) => a - b)).toEqual(
      orders.slice(0, 3).map((o) => o.number),
    );
    expect(
      dropped.every(
        (entry) => JSON.parse(entry.body as string).type === 'order.placed' && entry.locationId === 'loc-cap',
      ),
    ).toBe(true);
    startWorker();
    await eventually(
      async () => receiver.got.length === 5 && (await owing('loc-cap')) === 0,
      'the five left delivered, every debt settled',
    );
    expect(
      receiver.got.map((g) => g.webhookId).filter((id) => dropped.some((entry) => entry.webhookId === id)),
    ).toEqual([]);
    await by.close();
  });

  it('sends again, when run again, only what a run before did not settle', async () => {
    const { receiver, subscription } = await endpoint('loc-again');
    await newOrders('loc-again', 3);
    const by = relay();
    await by.pass();
    const [job] = await batchJobs(subscription._id);
    const d = deps();
    await deliverBatch(d, config.webhooks, job as Job<DeliveryBatchData>);
    expect(receiver.got).toHaveLength(3);
    // BullMQ runs the job again (its worker died before recording it done): nothing is sent twice
    job!.attemptsStarted = 2;
    await deliverBatch(d, config.webhooks, job as Job<DeliveryBatchData>);
    expect(receiver.got).toHaveLength(3);
    await by.close();
  });

  it("keeps connections to an endpoint for a batch's POSTs", async () => {
    const { receiver, subscription } = await endpoint('loc-kept');
    let connections = 0;
    receiver.onConnection(() => (connections += 1));
    await newOrders('loc-kept', 5);
    const by = relay();
    await by.pass();
    const [job] = await batchJobs(subscription._id);
    // two at a time: the last three follow on the first two's connections
    await deliverBatch(
      deps({ endpointConcurrency: 2 }),
      { ...config.webhooks, endpointConcurrency: 2 },
      job as Job<DeliveryBatchData>,
    );
    expect(receiver.got).toHaveLength(5);
    expect(connections).toBe(2);
    await by.close();
  });

  it('sends again at once, on a new connection, a POST whose kept connection the endpoint had closed', async () => {
    const server = new OneRequestPerConnection();
    const subscription = await subscribe('loc-closing', await server.listen());
    const by = relay();
    const d = deps({ endpointConcurrency: 2 });
    // the second batch's POSTs find the first's connections kept, and each is reset as it is reused
    for (const count of [2, 3]) {
      await newOrders('loc-closing', count);
      await by.pass();
      const job = (await batchJobs(subscription._id)).find(
        (found) => (found.data as DeliveryBatchData).items.length === count,
      );
      await deliverBatch(d, { ...config.webhooks, endpointConcurrency: 2 }, job as Job<DeliveryBatchData>);
    }
    const entries = await db.collection('webhookDeliveries').find({ subscriptionId: subscription._id }).toArray();
    expect(entries.map((entry) => [entry.outcome, entry.attempt])).toEqual(
      Array.from({ length: 5 }, () => ['delivered', 1]),
    );
    expect(server.answered).toBe(5);
    expect(server.connections).toBe(5);
    await by.close();
    await server.close();
  });
});
