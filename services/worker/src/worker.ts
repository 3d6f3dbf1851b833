/**
 * The worker's composition root: its connections and repositories, made once, then each part it
 * runs (the transition queue's consumers, the webhook deliveries, the lifecycle job, the order
 * deadlines, the presence sweep, the event relay), and their shutdown in order.
 */
import type { Config } from '@pos/shared/config';
import { requireUrls, webhookSecretKey } from '@pos/shared/config';
import type { Logger } from '@pos/shared/log';
import { createOrderDeadlineQueue, type OrderDeadlineJob } from '@pos/shared/queue/order-deadlines';
import { createSnoozeEndQueue } from '@pos/shared/queue/snooze-ends';
import type { Queue } from 'bullmq';
import { TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import { layoutPartitions, queueLayout } from '@pos/shared/queue/transition-queue';
import { ChannelSubscriber } from '@pos/shared/pubsub/channel-subscriber';
import { clusterNodes, singleRedisNodes } from '@pos/shared/pubsub/subscriber-nodes';
import { closeRedis, createRedis, isCluster, redisTarget } from '@pos/shared/redis';
import { connectMongo, ensureIndexes } from '@pos/shared/store/mongo';
import { createRepos } from '@pos/shared/store/repos';
import { SecretBox } from '@pos/shared/webhooks/secrets';
import { createWebhooks } from '@pos/shared/webhooks/wiring';
import { outboxes } from '@pos/shared/store/outboxes';
import { type Stopper, stopInOrder } from '@pos/shared/process/stoppers';
import { MIGRATIONS } from '@pos/shared/migrations/list';
import { runMigrations } from '@pos/shared/migrations/runner';
import { faultInjection } from './fault-injection';
import { circuitsOpenGauge, createWorkerMetrics, serveMetrics } from './metrics';
import { startOrderDeadlines } from './schedules/order-deadlines';
import { startSnoozeEnds } from './schedules/snooze-ends';
import { startLifecycle } from './schedules/lifecycle';
import { startPresenceSweep } from './schedules/presence-sweep';
import { AnsweredJobs } from './transitions/answered-jobs';
import { consumePartition } from './transitions/consumers';
import { watchDrain } from './transitions/drain';
import { FailureThresholds } from './transitions/failure-thresholds';
import { orderFollowUps } from './transitions/follow-ups';
import { OrderCache } from './transitions/order-cache';
import { MessageSender } from './transitions/job-messages';
import { JobProcessor } from './transitions/processor';
import { OutboxRelay } from './outbox/relay';
import { succeeded } from './webhooks/attempt';
import { startDeliveryWorker } from './webhooks/delivery';
import { EndpointGuards } from './webhooks/endpoint-guards';
import { RELAXED_GUARD } from '@pos/shared/webhooks/url-guard';

export interface RunningWorker {
  /** Where its /metrics listens (METRICS_PORT; `0` takes a free port), when it serves them. */
  metricsPort?: number;
  /** Stops taking jobs, lets the active ones finish, then disconnects. */
  close(): Promise<void>;
}

/**
 * What the active jobs leave of the grace period for the steps after them: each of those takes a
 * few ms when Redis and MongoDB answer, and at most STEP_MS (or what is left) when not.
 */
const CLOSING_RESERVE_MS = 1_000;
const STEP_MS = 750;

/**
 * How long a job's answer is kept, in lock periods: a job whose worker died is run again once its
 * lock has lapsed and the next stalled-job check (every lock period) has seen it.
 */
const ANSWER_KEPT_LOCK_PERIODS = 10;

/** The worker's connections and what is made once on them: the repositories (migrated), metrics, webhooks' queue. */
async function connect(config: Config, mongoUrl: string, log: Logger) {
  const target = redisTarget(config.redis);
  const store = await connectMongo(mongoUrl, config.mongo, { boundOperations: false });
  await ensureIndexes(store.db);
  const repos = createRepos(store.db, { appliedJobsKeptMs: config.idempotency.ttlMs });
  // before any job: what this release's code expects of the documents (docs/upgrades.md#migrations)
  await runMigrations(store.db, MIGRATIONS, { leases: repos.leases, log });
  const metrics = createWorkerMetrics(store.commandCount);
  // (on a cluster its slot map is read every few seconds: the subscriber follows a channel whose slot moved)
  const redis = createRedis(target, { maxRetriesPerRequest: 3 }, log, { slotsRefreshInterval: 5_000 });
  // BullMQ's queues have a connection of their own: BullMQ defines its 64 scripts on a connection
  // it is given, and ioredis copies them into every pipeline made there (some 60 us each), so the
  // jobs' messages and every other command go on `redis`, where a pipeline costs a few.
  const queueRedis = createRedis(target, { maxRetriesPerRequest: 3 }, log);
  // BullMQ leaves a connection it was given open on close; we close it ourselves.
  const workerConnection = createRedis(target, { maxRetriesPerRequest: null }, log);
  const webhooks = createWebhooks({
    repos,
    redis,
    queueRedis,
    redisConfig: config.redis,
    webhooks: config.webhooks,
    registry: metrics.registry,
    log,
  });
  // what it hears of: the locations' changes (its failure thresholds)
  const subscriber = new ChannelSubscriber(
    isCluster(redis) ? clusterNodes(target, redis) : singleRedisNodes(target),
    log,
  );
  return {
    store,
    repos,
    metrics,
    redis,
    queueRedis,
    workerConnection,
    subscriber,
    webhooks,
    checkpoint: faultInjection(config.worker.faultInject, log),
  };
}
type Connections = Awaited<ReturnType<typeof connect>>;

/** The events the writes recorded, to the event log and the webhooks' queue. */
function eventRelay(config: Config, { store, repos, webhooks, redis, metrics }: Connections, log: Logger): OutboxRelay {
  return new OutboxRelay({
    outboxes: outboxes(store.db),
    events: repos.events,
    leases: repos.leases,
    fanOut: webhooks.fanOut,
    deliveries: webhooks.deliveries,
    redis,
    prefix: config.redis.prefix,
    metrics: metrics.relay,
    log: log.child({ part: 'event-relay' }),
  });
}

/** Order transitions: what follows one (order deadline jobs, the failed-order count), then the pipeline. */
function transitions(
  config: Config,
  { redis, repos, checkpoint }: Connections,
  parts: { thresholds: FailureThresholds; orderDeadlineQueue: Queue<OrderDeadlineJob> },
  log: Logger,
): JobProcessor {
  const { thresholds, orderDeadlineQueue } = parts;
  return new JobProcessor({
    redis,
    messages: new MessageSender(redis),
    prefix: config.redis.prefix,
    repos,
    orderCache: new OrderCache(),
    answers: new AnsweredJobs(config.redis.prefix, ANSWER_KEPT_LOCK_PERIODS * config.worker.jobLockDurationMs),
    followUps: orderFollowUps({
      orderDeadlines: orderDeadlineQueue,
      locations: repos.locations,
      settings: config.orderDeadlines,
      pauseAfterFailedOrders: config.presence.pauseAfterFailedOrders,
      log,
    }),
    failureThreshold: (locationId) => thresholds.of(locationId),
    checkpoint,
    log,
  });
}

/** Webhook deliveries, each endpoint within its share; none without a secret to seal them with. */
function deliveries(config: Config, { workerConnection, repos, webhooks, metrics }: Connections, log: Logger) {
  const secretKey = webhookSecretKey(config);
  const guards = new EndpointGuards(config.webhooks, succeeded);
  circuitsOpenGauge(metrics.registry, () => guards.openCircuits);
  if (!secretKey) {
    log.warn('neither WEBHOOK_SECRET_KEY nor API_KEY_SECRET is set: this worker delivers no webhooks');
    return undefined;
  }
  return startDeliveryWorker(workerConnection, config.redis, config.webhooks, config.worker.jobLockDurationMs, {
    webhooks: repos.webhooks,
    deliveries: repos.webhookDeliveries,
    pending: webhooks.deliveries,
    events: repos.events,
    guards,
    secrets: new SecretBox(secretKey),
    metrics: metrics.webhooks,
    log: log.child({ queue: 'webhook-delivery' }),
  });
}

/** The worker's shutdown, in order (docs/operating.md#stopping-a-role). */
function stoppers(
  config: Config,
  connections: Connections,
  running: { stopWork(): Promise<unknown>; drain?: { stop(): Promise<void> } },
): Stopper[] {
  const { store, webhooks, subscriber } = connections;
  const redisConnections = [connections.redis, connections.queueRedis, connections.workerConnection];
  return [
    {
      // BullMQ stops taking jobs and waits for the active ones; past the budget, dropping the
      // connections hands them back (their locks lapse, another worker runs them again and
      // finds what they wrote among the orders' applied jobs)
      name: 'finishing the active jobs',
      withinMs: config.process.shutdownGraceMs - CLOSING_RESERVE_MS,
      stop: running.stopWork,
      force: () => redisConnections.forEach((connection) => connection.disconnect()),
    },
    { name: 'closing the drained queues', withinMs: STEP_MS, stop: () => running.drain?.stop() ?? Promise.resolve() },
    { name: 'closing the webhook queue', withinMs: STEP_MS, stop: () => webhooks.queue.close() },
    {
      name: 'closing Redis',
      withinMs: STEP_MS,
      stop: () => Promise.all([...redisConnections.map((connection) => closeRedis(connection)), subscriber.quit()]),
    },
    { name: 'closing MongoDB', withinMs: STEP_MS, stop: () => store.close(), force: () => store.close(true) },
  ];
}

/**
 * The transition queue's partitions, draining ones too (watched until
 * empty: see watchDrain), and the webhook deliveries.
 */
async function startConsumers(config: Config, connections: Connections, processor: JobProcessor, log: Logger) {
  const { current, draining } = layoutPartitions(queueLayout(config));
  const consumers = [...current, ...draining].map((partition) =>
    consumePartition({
      partition,
      connection: connections.workerConnection,
      config: config.worker,
      processor,
      metrics: connections.metrics,
      log,
    }),
  );
  const drain = draining.length > 0 ? await watchDrain(draining, connections.queueRedis, log) : undefined;
  const deliveryWorker = deliveries(config, connections, log);
  const queueWorkers = [...consumers, ...(deliveryWorker ? [deliveryWorker] : [])];
  await Promise.all(queueWorkers.map((worker) => worker.waitUntilReady()));
  return { queueWorkers, drain, current, draining };
}

/** The scheduled and delayed jobs, each closed at shutdown. */
async function startSchedules(
  config: Config,
  connections: Connections,
  processor: JobProcessor,
  orderDeadlineQueue: Queue<OrderDeadlineJob>,
  log: Logger,
) {
  const { repos, workerConnection, checkpoint } = connections;
  const scheduled = {
    config,
    log,
    redis: connections.redis,
    queueRedis: connections.queueRedis,
    workerConnection,
    checkpoint,
  };
  return [
    await startLifecycle({ ...scheduled, deps: { ...repos, checkpoint } }),
    await startOrderDeadlines({
      ...scheduled,
      queue: orderDeadlineQueue,
      orders: repos.orders,
      contextFor: (jobId, jobLog, events, runBefore) => processor.context(jobId, jobLog, events, { runBefore }),
    }),
    await startPresenceSweep({ ...scheduled, locations: repos.locations }),
    await startSnoozeEnds({
      ...scheduled,
      queue: createSnoozeEndQueue(connections.queueRedis, config.redis, log),
      menus: repos.menus,
    }),
  ];
}

export async function startWorker(config: Config, log: Logger): Promise<RunningWorker> {
  const { mongoUrl } = requireUrls(config);
  const connections = await connect(config, mongoUrl, log);
  const { repos, metrics } = connections;
  const relay = eventRelay(config, connections, log);
  const orderDeadlineQueue = createOrderDeadlineQueue(connections.queueRedis, config.redis, log);
  const thresholds = new FailureThresholds(
    repos.locations,
    connections.subscriber,
    config.redis.prefix,
    config.orders.failureThreshold,
    metrics.thresholds,
  );
  connections.subscriber.startHeartbeat();
  thresholds.start(log);
  const processor = transitions(config, connections, { thresholds, orderDeadlineQueue }, log);
  const { queueWorkers, drain, current, draining } = await startConsumers(config, connections, processor, log);
  const listener =
    config.worker.metricsPort === undefined
      ? undefined
      : await serveMetrics(metrics.registry, config.worker.metricsPort, config.http.host);
  const schedules = await startSchedules(config, connections, processor, orderDeadlineQueue, log);
  relay.start();
  const drained = draining.length > 0 ? { draining: draining.map((partition) => partition.label) } : {};
  log.info(
    {
      queue: TRANSITION_QUEUE,
      partitions: current.length,
      ...drained,
      concurrency: config.worker.concurrency,
      metricsPort: listener?.port,
    },
    'worker ready',
  );
  if (config.webhooks.allowPrivate) log.warn(RELAXED_GUARD);

  // The relay stops at once, beside the rest: what the finishing jobs write waits in the outboxes
  // for the next holder, who takes the lease as soon as this one gives it back (OutboxRelay.close).
  const stopWork = async () => {
    await Promise.all([
      relay.close(),
      ...queueWorkers.map((worker) => worker.close()),
      ...schedules.map((schedule) => schedule.close()),
    ]);
    await thresholds.stop();
  };
  return {
    metricsPort: listener?.port,
    async close() {
      listener?.server.close();
      await stopInOrder(stoppers(config, connections, { stopWork, drain }), config.process.shutdownGraceMs, log);
      log.info('worker stopped');
    },
  };
}
