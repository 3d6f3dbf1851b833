import type { Queue } from 'bullmq';
import type { Middleware } from 'koa';
import type { Db } from 'mongodb';
import type { Config } from '@pos/shared/config';
import type { EventPublisher } from '@pos/shared/events/location-events';
import type { DeadlineJob } from '@pos/shared/queue/deadlines';
import type { Logger } from '@pos/shared/log';
import type { WorkQueues } from '@pos/shared/queue/work-queue';
import type { RedisClient } from '@pos/shared/redis';
import type { OrderArchiveRepo } from '@pos/shared/store/archive';
import type { AuditRepo } from '@pos/shared/store/audit';
import type { CommandsRepo } from '@pos/shared/store/commands';
import type { LocationsRepo } from '@pos/shared/store/locations';
import type { OperatorsRepo } from '@pos/shared/store/operators';
import type { OrdersRepo } from '@pos/shared/store/orders';
import type { SessionsRepo } from '@pos/shared/store/sessions';
import type { WorkRepo } from '@pos/shared/store/work';
import type { DeliveryJobData } from '@pos/shared/queue/webhook-queue';
import type { WebhookDeliveriesRepo, WebhooksRepo } from '@pos/shared/store/webhooks';
import type { DeliveryQueue } from '@pos/shared/webhooks/delivery-queue';
import type { SecretBox } from '@pos/shared/webhooks/secrets';
import type { AppState } from './context';
import type { IdempotencyStore } from './idempotency/idempotency-store';
import type { OperatorLookup } from './auth/operator-lookup';
import type { SessionLookup } from './auth/session-lookup';
import type { JobClient } from './jobs/job-client';
import type { InFlightLimit } from './overload/in-flight';
import type { QueueAdmission } from './overload/queue-admission';
import type { ApiMetrics } from './metrics/api-metrics';
import type { PresenceTracker } from './presence/presence-tracker';
import type { ChannelSubscriber } from './pubsub/channel-subscriber';
import type { StreamHub } from './stream/hub';

/** Everything the HTTP layer uses, built once per process by server.ts. */
export interface ApiDeps {
  config: Config;
  adminToken: string;
  /** A new API key, signed under API_KEY_SECRET. */
  newApiKey(): string;
  log: Logger;
  db: Db;
  /** The request-path connection (a Cluster client on REDIS_CLUSTER=1). */
  redis: RedisClient;
  /** The work queue's partitions. */
  queues: WorkQueues;
  /** The order lifecycle job's queue (archive, expiry, purges), for Bull Board. */
  lifecycleQueue: Queue;
  /** The webhook delivery queue (tests and redeliveries are added here; the worker delivers). */
  webhookQueue: Queue<DeliveryJobData>;
  webhooks: WebhooksRepo;
  webhookDeliveries: WebhookDeliveriesRepo;
  /** Where test events and redeliveries are added, within each subscription's cap. */
  deliveries: DeliveryQueue;
  /** Seals webhook secrets under WEBHOOK_SECRET_KEY (else API_KEY_SECRET). */
  webhookSecrets: SecretBox;
  subscriber: ChannelSubscriber;
  /** The event streams open on this node and their location subscriptions. */
  hub: StreamHub;
  jobs: JobClient;
  /** Admission to the work queue's partitions (overload/queue-admission.ts). */
  admission: QueueAdmission;
  /** The node's bound on requests in flight (HTTP_MAX_IN_FLIGHT). */
  inFlight: InFlightLimit;
  /** RATE_LIMIT per API key, after authentication (a pass-through when unset). */
  rateLimit: Middleware<AppState>;
  /** Idempotency-Key records, shared by every node through Redis. */
  idempotency: IdempotencyStore;
  events: EventPublisher;
  metrics: ApiMetrics;
  orders: OrdersRepo;
  archive: OrderArchiveRepo;
  commands: CommandsRepo;
  /** The register's work (PLACED orders and live commands) in one read. */
  work: WorkRepo;
  sessions: SessionsRepo;
  /** api_key to session, with the node's bounds on bad keys (the api_key authentication's). */
  sessionLookup: SessionLookup;
  locations: LocationsRepo;
  /** This node's sightings of registers, written behind to Redis (presence). */
  presence: PresenceTracker;
  /** Where counter orders (created PLACED here) add their deadline jobs. */
  deadlines: Queue<DeadlineJob>;
  operators: OperatorsRepo;
  /** An operator's bearer token to its account, cached like sessions (auth/operator-lookup.ts). */
  operatorLookup: OperatorLookup;
  audit: AuditRepo;
  /** False once shutdown begins, so that load balancers stop sending work. */
  isAccepting(): boolean;
}
