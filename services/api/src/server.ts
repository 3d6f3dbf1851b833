import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '@pos/shared/config';
import { ConfigError, requireUrls } from '@pos/shared/config';
import { EventPublisher } from '@pos/shared/events/location-events';
import type { Logger } from '@pos/shared/log';
import { replyChannel } from '@pos/shared/queue/jobs';
import { createLifecycleQueue } from '@pos/shared/queue/lifecycle';
import { createWorkQueue } from '@pos/shared/queue/work-queue';
import { closeRedis, createRedis } from '@pos/shared/redis';
import { OrderArchiveRepo } from '@pos/shared/store/archive';
import { CommandsRepo } from '@pos/shared/store/commands';
import { LocationsRepo } from '@pos/shared/store/locations';
import { connectMongo, ensureIndexes } from '@pos/shared/store/mongo';
import { OrdersRepo } from '@pos/shared/store/orders';
import { SessionsRepo } from '@pos/shared/store/sessions';
import { settleWithin } from '@pos/shared/util/deadline';
import { createApp } from './app';
import type { ApiDeps } from './deps';
import { JobClient } from './jobs/job-client';
import { createApiMetrics } from './metrics/api-metrics';
import { registerLifecycleMetrics } from './metrics/lifecycle-metrics';
import { ChannelSubscriber } from './pubsub/channel-subscriber';
import { StreamHub } from './stream/hub';

export interface RunningApi {
  port: number;
  /** The node's wiring, for in-process tests and tools. */
  deps: ApiDeps;
  /** Stops accepting, lets in-flight requests finish (up to SHUTDOWN_GRACE), then disconnects. */
  close(): Promise<void>;
}

export async function startApi(config: Config, log: Logger): Promise<RunningApi> {
  const { mongoUrl, redisUrl } = requireUrls(config);
  if (!config.adminToken) throw new ConfigError('ADMIN_TOKEN must be set for the API');
  const nodeId = randomUUID();
  const nodeLog = log.child({ nodeId });

  const store = await connectMongo(mongoUrl, config.mongoDb);
  await ensureIndexes(store.db);
  // Request-path commands give up quickly: a Redis outage answers 503 rather than hanging.
  const redis = createRedis(redisUrl, { maxRetriesPerRequest: 2 }, nodeLog);
  const subscriber = new ChannelSubscriber(createRedis(redisUrl, { maxRetriesPerRequest: null }), nodeLog);
  const queue = createWorkQueue(redis, config.redisPrefix, nodeLog);
  const lifecycleQueue = createLifecycleQueue(redis, config.redisPrefix, nodeLog);
  const metrics = createApiMetrics({ queue, subscriber });
  const orders = new OrdersRepo(store.db);
  const archive = new OrderArchiveRepo(store.db);
  registerLifecycleMetrics(metrics.registry, { redis, prefix: config.redisPrefix, orders, archive });
  const jobs = new JobClient(queue, subscriber, replyChannel(config.redisPrefix, nodeId), config.jobTimeoutMs, nodeLog, metrics.jobDuration);
  await jobs.start();

  const hub = new StreamHub({ subscriber, prefix: config.redisPrefix, metrics, log: nodeLog, subscribeTimeoutMs: config.jobTimeoutMs });

  let accepting = true;
  const deps: ApiDeps = {
    config,
    adminToken: config.adminToken,
    log: nodeLog,
    db: store.db,
    redis,
    queue,
    lifecycleQueue,
    subscriber,
    hub,
    jobs,
    events: new EventPublisher(redis, config.redisPrefix),
    metrics,
    orders,
    archive,
    commands: new CommandsRepo(store.db),
    sessions: new SessionsRepo(store.db),
    locations: new LocationsRepo(store.db),
    isAccepting: () => accepting,
  };

  const app = createApp(deps);
  const server = http.createServer(app.callback());
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  nodeLog.info({ port, basePath: config.basePath }, 'api listening');

  return {
    port,
    deps,
    async close() {
      accepting = false;
      // Streams are never idle: end them first, or server.close would wait for the grace period.
      // Bounded: with Redis down their UNSUBSCRIBEs would wait for a reconnect.
      await settleWithin(hub.close(), 1_000, nodeLog, 'ending the event streams');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => {
        nodeLog.warn('grace period over; closing remaining connections');
        server.closeAllConnections();
      }, config.shutdownGraceMs);
      await closed;
      clearTimeout(grace);
      await settleWithin(jobs.stop(), 1_000, nodeLog, 'dropping the reply channel');
      await settleWithin(Promise.all([queue.close(), lifecycleQueue.close()]), 2_000, nodeLog, 'closing the queues');
      await Promise.all([closeRedis(redis), subscriber.quit()]);
      await store.close();
      nodeLog.info('api stopped');
    },
  };
}
