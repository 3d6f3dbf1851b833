import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateApiKey } from '@pos/shared/auth/keys';
import type { Config, MongoConfig } from '@pos/shared/config';
import { ConfigError, requireUrls } from '@pos/shared/config';
import { Announcer, redisPublisher } from '@pos/shared/events/announcements';
import { operatorIdOf, sessionsChannel } from '@pos/shared/events/session-changes';
import type { Logger } from '@pos/shared/log';
import { replyChannel } from '@pos/shared/queue/jobs';
import { queueLayout, TransitionQueues } from '@pos/shared/queue/transition-queue';
import { closeRedis, createRedis, isCluster, redisTarget } from '@pos/shared/redis';
import { createLifecycleQueue } from '@pos/shared/queue/lifecycle';
import { createOrderDeadlineQueue } from '@pos/shared/queue/order-deadlines';
import { createSnoozeEndQueue } from '@pos/shared/queue/snooze-ends';
import { createWebhooks } from '@pos/shared/webhooks/wiring';
import { SecretBox } from '@pos/shared/webhooks/secrets';
import { connectMongo, ensureIndexes } from '@pos/shared/store/mongo';
import { createRepos } from '@pos/shared/store/repos';
import { type Stopper, stopInOrder } from '@pos/shared/process/stoppers';
import { createApps } from './app';
import { createHttpServer } from './http-server';
import { withEarlyRefusals } from './overload/early-refusal';
import { OperatorLookup } from './auth/operator-lookup';
import { SessionLookup } from './auth/session-lookup';
import type { ApiDeps } from './deps';
import { createServices } from './services';
import { IdempotencyStore } from './idempotency/idempotency-store';
import { JobClient } from './jobs/job-client';
import { InFlightLimit } from './overload/in-flight';
import { QueueAdmission } from './overload/queue-admission';
import { registerOverloadMetrics } from './metrics/overload-metrics';
import { rateLimitPerKey } from './middleware/rate-limit';
import { checkReadiness } from './health/readiness';
import { createApiMetrics } from './metrics/api-metrics';
import { registerLifecycleMetrics } from './metrics/lifecycle-metrics';
import { registerReadinessMetrics } from './metrics/readiness-metrics';
import { registerRedisMemoryMetrics } from './metrics/redis-memory-metrics';
import { ChannelSubscriber } from '@pos/shared/pubsub/channel-subscriber';
import { clusterNodes, singleRedisNodes } from '@pos/shared/pubsub/subscriber-nodes';
import { StreamHub } from './stream/hub';
import { PresenceTracker } from './presence/presence-tracker';
import { registerPresenceMetrics } from './metrics/presence-metrics';
import { RELAXED_GUARD } from '@pos/shared/webhooks/url-guard';

export interface RunningApi {
  /** The register-facing listener (PORT). */
  port: number;
  /** The operator listener (ADMIN_PORT), when it is set. */
  adminPort?: number;
  /** The node's wiring, for in-process tests and tools. */
  deps: ApiDeps;
  /** Stops accepting, lets in-flight requests finish (up to SHUTDOWN_GRACE), then disconnects. */
  close(): Promise<void>;
}

/**
 * What the requests in flight leave of the grace period for the steps after them: each of those
 * takes a few ms when Redis and MongoDB answer, and at most STEP_MS (or what is left) when not.
 */
const CLOSING_RESERVE_MS = 1_000;
const STEP_MS = 750;

/**
 * Indexes are built on a connection of their own, without MONGO_TIMEOUT: a new index on a large
 * collection takes as long as it takes, and must not keep the node from starting.
 */
async function buildIndexes(mongoUrl: string, mongo: MongoConfig): Promise<void> {
  const setup = await connectMongo(mongoUrl, mongo, { boundOperations: false });
  try {
    await ensureIndexes(setup.db);
  } finally {
    await setup.close();
  }
}

/** The node's connections: MongoDB (its request path bounded by MONGO_TIMEOUT), Redis, the subscriber. */
async function connect(config: Config, mongoUrl: string, log: Logger) {
  const target = redisTarget(config.redis);
  await buildIndexes(mongoUrl, config.mongo);
  // Every operation of this client is on a request path: bounded by MONGO_TIMEOUT.
  const store = await connectMongo(mongoUrl, config.mongo, { boundOperations: true });
  // Request-path commands give up quickly: a Redis outage or hang answers 503 rather than hanging.
  // (Nothing on these connections blocks by design: BullMQ's Queue uses no blocking command; the
  // subscribers have connections of their own.) On a cluster the slot map is read every few
  // seconds too: the subscriptions and /readyz follow slots that moved while no command of the
  // node ran into them.
  const requestPathRedis = () =>
    createRedis(target, { maxRetriesPerRequest: 2, commandTimeout: config.redis.commandTimeoutMs }, log, {
      slotsRefreshInterval: 5_000,
    });
  const redis = requestPathRedis();
  // BullMQ's queues have a connection of their own: BullMQ defines its 64 scripts on a connection
  // it is given, and ioredis copies them into every pipeline made there (some 60 us and 14 KB
  // each), so every other command of the node (presence, idempotency, rate limits, events) goes
  // on `redis`, where a pipeline costs a few.
  const queueRedis = requestPathRedis();
  const subscriber = new ChannelSubscriber(
    isCluster(redis) ? clusterNodes(target, redis) : singleRedisNodes(target),
    log,
  );
  return { store, redis, queueRedis, subscriber };
}
type Connections = Awaited<ReturnType<typeof connect>>;

/**
 * The queues the node adds to and reads (the transition queue's partitions, the
 * lifecycle's, the deadlines', the webhooks'), and its metrics.
 */
function queuesAndMetrics(config: Config, { store, redis, queueRedis, subscriber }: Connections, log: Logger) {
  const queues = new TransitionQueues(queueRedis, queueLayout(config), log, config.queue.jobKeepFailed);
  const lifecycleQueue = createLifecycleQueue(queueRedis, config.redis, log);
  const orderDeadlines = createOrderDeadlineQueue(queueRedis, config.redis, log);
  const snoozeEnds = createSnoozeEndQueue(queueRedis, config.redis, log);
  const repos = createRepos(store.db, { appliedJobsKeptMs: config.idempotency.ttlMs });
  const metrics = createApiMetrics({ queues, subscriber, mongoCommands: store.commandCount });
  // Webhook deliveries the API adds itself: test events and redeliveries.
  const webhooks = createWebhooks({
    repos,
    redis,
    queueRedis,
    redisConfig: config.redis,
    webhooks: config.webhooks,
    registry: metrics.registry,
    log,
  });
  registerLifecycleMetrics(metrics.registry, {
    redis,
    prefix: config.redis.prefix,
    orders: repos.orders,
    archive: repos.archive,
  });
  registerRedisMemoryMetrics(metrics.registry, redis);
  registerPresenceMetrics(metrics.registry, { locations: repos.locations, redis, prefix: config.redis.prefix });
  return { queues, lifecycleQueue, orderDeadlines, snoozeEnds, repos, metrics, webhooks };
}
type Built = ReturnType<typeof queuesAndMetrics>;

/** The keys' and operator tokens' look-ups, cached per node and dropped on the deployment's session channel. */
async function credentialLookups(
  config: Config,
  keySecret: string,
  parts: Pick<Connections, 'subscriber'> & Pick<Built, 'repos' | 'metrics'>,
) {
  const { auth } = config;
  const { subscriber, repos, metrics } = parts;
  const feed = { feed: subscriber, channel: sessionsChannel(config.redis.prefix), max: auth.sessionCacheSize };
  const secrets = [keySecret, ...auth.apiKeySecretPrevious];
  const sessionLookup = new SessionLookup(
    repos.sessions,
    { secrets, acceptUnsigned: auth.apiKeyAcceptUnsigned, unsignedRequests: metrics.unsignedKeyRequests },
    config.limits.apiKeyMaxRejections,
    feed,
  );
  await sessionLookup.start();
  // Operators change on the session channel too: a deleted one's token stops on every node at once.
  const operatorLookup = new OperatorLookup(repos.operators, secrets, feed);
  await operatorLookup.start();
  return { sessionLookup, operatorLookup };
}

/** Listens on PORT (and ADMIN_PORT when set); the ports taken. */
async function listen(config: Config, deps: ApiDeps): Promise<{ servers: Server[]; port: number; adminPort?: number }> {
  const apps = createApps(deps);
  const servers = [createHttpServer(config.http, withEarlyRefusals(deps, apps.public.callback()))];
  if (apps.operator) servers.push(createHttpServer(config.http, apps.operator.callback()));
  const [port, adminPort] = await Promise.all(
    servers.map(async (server, index) => {
      server.listen(index === 0 ? config.http.port : config.http.adminPort, config.http.host);
      await once(server, 'listening');
      return (server.address() as AddressInfo).port;
    }),
  );
  return { servers, port: port!, adminPort };
}

/** The node's shutdown, in order (docs/operating.md#stopping-a-role). */
function stoppers(
  config: Config,
  parts: Connections & Built & { servers: Server[]; deps: ApiDeps; dropSessionChannel: () => Promise<unknown> },
): Stopper[] {
  const { servers, deps, store, redis, queueRedis, subscriber } = parts;
  return [
    // Streams are never idle: ended first, or the servers would wait for them. (With Redis down
    // their UNSUBSCRIBEs would wait for a reconnect.)
    { name: 'ending the event streams', withinMs: STEP_MS, stop: () => deps.hub.close() },
    {
      // a request waiting for a worker ends by its deadline (JOB_TIMEOUT and a second)
      name: 'finishing the requests in flight',
      withinMs: config.process.shutdownGraceMs - CLOSING_RESERVE_MS,
      stop: () => {
        const closed = Promise.all(
          servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
        );
        for (const server of servers) server.closeIdleConnections();
        return closed;
      },
      force: () => servers.forEach((server) => server.closeAllConnections()),
    },
    { name: 'dropping the reply channel', withinMs: STEP_MS, stop: () => deps.jobs.stop() },
    { name: 'dropping the session channel', withinMs: STEP_MS, stop: parts.dropSessionChannel },
    {
      name: 'closing the queues',
      withinMs: STEP_MS,
      stop: () =>
        Promise.all([
          parts.queues.close(),
          parts.lifecycleQueue.close(),
          parts.orderDeadlines.close(),
          parts.snoozeEnds.close(),
          parts.webhooks.queue.close(),
        ]),
    },
    {
      name: 'closing Redis',
      withinMs: STEP_MS,
      stop: () => Promise.all([closeRedis(redis), closeRedis(queueRedis), subscriber.quit()]),
      force: () => [redis, queueRedis].forEach((connection) => connection.disconnect()),
    },
    { name: 'closing MongoDB', withinMs: STEP_MS, stop: () => store.close(), force: () => store.close(true) },
  ];
}

/** A changed operator's streams end on every node, as a closed session's do; returns the unsubscribe. */
async function endChangedOperatorStreams(subscriber: Connections['subscriber'], prefix: string, hub: StreamHub) {
  const end = (message: string) => {
    const operatorId = operatorIdOf(message);
    if (operatorId !== undefined) hub.operatorChanged(operatorId);
  };
  await subscriber.subscribe(sessionsChannel(prefix), end);
  return () => subscriber.unsubscribe(sessionsChannel(prefix), end);
}

/**
 * What the node runs on its connections: the job client and admission, the
 * stream hub, presence, the credential look-ups.
 */
async function nodeParts(
  config: Config,
  nodeId: string,
  keySecret: string,
  connections: Connections,
  built: Built,
  log: Logger,
) {
  const { redis, queueRedis, subscriber } = connections;
  const { queues, repos, metrics } = built;
  const admission = new QueueAdmission(queues.current.length, {
    targetWaitMs: config.overload.queueWaitTargetMs,
    floor: config.overload.queueAdmissionFloor,
  });
  const inFlight = new InFlightLimit(config.overload.maxInFlight);
  registerOverloadMetrics(metrics.registry, { admission, inFlight });
  const reply = replyChannel(config.redis.prefix, nodeId);
  const jobs = new JobClient(
    queues,
    admission,
    subscriber,
    reply,
    config.queue.jobTimeoutMs,
    log,
    metrics.jobDuration,
    () => queueRedis.status === 'ready',
  );
  await jobs.start();
  subscriber.startHeartbeat();
  const hub = new StreamHub({
    subscriber,
    prefix: config.redis.prefix,
    metrics,
    log,
    repos,
    operators: repos.operators,
    subscribeTimeoutMs: config.queue.jobTimeoutMs,
    streams: config.streams,
  });
  const presence = new PresenceTracker({
    redis,
    prefix: config.redis.prefix,
    nodeId,
    windowMs: config.presence.windowMs,
    log,
  });
  const lookups = await credentialLookups(config, keySecret, { subscriber, repos, metrics });
  const unsubscribe = await endChangedOperatorStreams(subscriber, config.redis.prefix, hub);
  const dropSessionChannel = () =>
    Promise.all([lookups.sessionLookup.stop(), lookups.operatorLookup.stop(), unsubscribe()]);
  return { admission, inFlight, jobs, hub, presence, ...lookups, dropSessionChannel };
}

/** The node's wiring, as its routes take it. */
function apiDeps(
  config: Config,
  keySecret: string,
  parts: Connections & Built & Awaited<ReturnType<typeof nodeParts>>,
  log: Logger,
  isAccepting: () => boolean,
): ApiDeps {
  const { store, redis, subscriber, repos, metrics, webhooks, jobs } = parts;
  const announcer = new Announcer(redisPublisher(redis), config.redis.prefix);
  const services = createServices({
    config,
    repos,
    redis,
    announcer,
    jobs,
    orderDeadlines: parts.orderDeadlines,
    snoozeEnds: parts.snoozeEnds,
    deliveries: webhooks.deliveries,
    webhookSecrets: new SecretBox(config.webhooks.secretKey ?? keySecret), // see webhookSecretKey
    metrics,
    newApiKey: () => generateApiKey(keySecret),
  });
  return {
    config,
    log,
    services,
    repos,
    db: store.db,
    redis,
    queues: parts.queues,
    lifecycleQueue: parts.lifecycleQueue,
    orderDeadlines: parts.orderDeadlines,
    snoozeEnds: parts.snoozeEnds,
    webhookQueue: webhooks.queue,
    deliveries: webhooks.deliveries,
    subscriber,
    hub: parts.hub,
    jobs,
    admission: parts.admission,
    inFlight: parts.inFlight,
    rateLimit: rateLimitPerKey(config.limits.rateLimit, redis, config.redis.prefix, log),
    // A first attempt still holding its key past the longest wait (JOB_TIMEOUT) is taken for dead.
    idempotency: new IdempotencyStore(
      redis,
      config.redis.prefix,
      config.idempotency.ttlMs,
      config.queue.jobTimeoutMs + 5_000,
    ),
    announcer,
    metrics,
    adminToken: config.auth.adminToken!,
    sessionLookup: parts.sessionLookup,
    operatorLookup: parts.operatorLookup,
    presence: parts.presence,
    isAccepting,
  };
}

export async function startApi(config: Config, log: Logger): Promise<RunningApi> {
  const { mongoUrl } = requireUrls(config);
  const { auth } = config;
  if (!auth.adminToken) throw new ConfigError('ADMIN_TOKEN must be set for the API');
  if (!auth.apiKeySecret) throw new ConfigError('API_KEY_SECRET must be set for the API');
  const keySecret = auth.apiKeySecret;
  const nodeId = randomUUID();
  const nodeLog = log.child({ nodeId });

  const connections = await connect(config, mongoUrl, nodeLog);
  const built = queuesAndMetrics(config, connections, nodeLog);
  const parts = {
    ...connections,
    ...built,
    ...(await nodeParts(config, nodeId, keySecret, connections, built, nodeLog)),
  };
  let accepting = true;
  const deps = apiDeps(config, keySecret, parts, nodeLog, () => accepting);
  registerReadinessMetrics(built.metrics.registry, () => checkReadiness(deps));
  const { servers, port, adminPort } = await listen(config, deps);
  nodeLog.info({ port, adminPort, basePath: config.http.basePath }, 'api listening');
  if (config.webhooks.allowPrivate) nodeLog.warn(RELAXED_GUARD);

  return {
    port,
    adminPort,
    deps,
    async close() {
      accepting = false;
      parts.presence.stop();
      await stopInOrder(stoppers(config, { ...parts, servers, deps }), config.process.shutdownGraceMs, nodeLog);
      nodeLog.info('api stopped');
    },
  };
}
