import type { Queue } from 'bullmq';
import type { Middleware } from 'koa';
import type { Db } from 'mongodb';
import type { Config } from '@pos/shared/config';
import type { Announcer } from '@pos/shared/events/announcements';
import type { Logger } from '@pos/shared/log';
import type { OrderDeadlineJob } from '@pos/shared/queue/order-deadlines';
import type { SnoozeEndJob } from '@pos/shared/queue/snooze-ends';
import type { WebhookJobData } from '@pos/shared/queue/webhook-queue';
import type { TransitionQueues } from '@pos/shared/queue/transition-queue';
import type { RedisClient } from '@pos/shared/redis';
import type { Repos } from '@pos/shared/store/repos';
import type { DeliveryQueue } from '@pos/shared/webhooks/delivery-queue';
import type { AppState } from './context';
import type { OperatorLookup } from './auth/operator-lookup';
import type { SessionLookup } from './auth/session-lookup';
import type { IdempotencyStore } from './idempotency/idempotency-store';
import type { JobClient } from './jobs/job-client';
import type { ApiMetrics } from './metrics/api-metrics';
import type { InFlightLimit } from './overload/in-flight';
import type { QueueAdmission } from './overload/queue-admission';
import type { PresenceTracker } from './presence/presence-tracker';
import type { ChannelSubscriber } from '@pos/shared/pubsub/channel-subscriber';
import type { Services } from './services';
import type { StreamHub } from './stream/hub';

/**
 * What the HTTP layer uses, built once per node by server.ts: the services the handlers call
 * (services/), and what the middleware, the streams and the probes need of the node itself.
 */
export interface ApiDeps {
  config: Config;
  log: Logger;
  services: Services;
  /** The repositories, for the middleware (audit records), the streams' reads and the probes. */
  repos: Repos;
  db: Db;
  /** The request-path connection (a Cluster client on REDIS_CLUSTER=1). */
  redis: RedisClient;
  /** The transition queue's partitions. */
  queues: TransitionQueues;
  /** The order lifecycle job's queue (archive, expiry, purges), for Bull Board. */
  lifecycleQueue: Queue;
  /** The order deadlines' queue, for Bull Board. */
  orderDeadlines: Queue<OrderDeadlineJob>;
  /** The snooze ends' queue (docs/menu.md), for Bull Board. */
  snoozeEnds: Queue<SnoozeEndJob>;
  /** The webhook delivery queue, for Bull Board. */
  webhookQueue: Queue<WebhookJobData>;
  /** Where deliveries are added, within each subscription's cap (the webhook service's, and tests'). */
  deliveries: DeliveryQueue;
  subscriber: ChannelSubscriber;
  /** The event streams open on this node and their location subscriptions. */
  hub: StreamHub;
  jobs: JobClient;
  /** Admission to the transition queue's partitions (overload/queue-admission.ts). */
  admission: QueueAdmission;
  /** The node's bound on requests in flight (HTTP_MAX_IN_FLIGHT). */
  inFlight: InFlightLimit;
  /** RATE_LIMIT per API key, after authentication (a pass-through when unset). */
  rateLimit: Middleware<AppState>;
  /** Idempotency-Key records, shared by every node through Redis. */
  idempotency: IdempotencyStore;
  announcer: Announcer;
  metrics: ApiMetrics;
  /** The root credential, ADMIN_TOKEN. */
  adminToken: string;
  /** api_key to session, with the node's bounds on bad keys (the api_key authentication's). */
  sessionLookup: SessionLookup;
  /** An operator's bearer token to its account, cached like sessions (auth/operator-lookup.ts). */
  operatorLookup: OperatorLookup;
  /** This node's sightings of registers, written behind to Redis (presence). */
  presence: PresenceTracker;
  /** False once shutdown begins, so that load balancers stop sending work. */
  isAccepting(): boolean;
}
