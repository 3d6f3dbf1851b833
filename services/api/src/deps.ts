import type { Queue } from 'bullmq';
import type { Db } from 'mongodb';
import type Redis from 'ioredis';
import type { Config } from '@pos/shared/config';
import type { EventPublisher } from '@pos/shared/events/location-events';
import type { Logger } from '@pos/shared/log';
import type { OrderArchiveRepo } from '@pos/shared/store/archive';
import type { CommandsRepo } from '@pos/shared/store/commands';
import type { LocationsRepo } from '@pos/shared/store/locations';
import type { OrdersRepo } from '@pos/shared/store/orders';
import type { SessionsRepo } from '@pos/shared/store/sessions';
import type { JobClient } from './jobs/job-client';
import type { ApiMetrics } from './metrics/api-metrics';
import type { ChannelSubscriber } from './pubsub/channel-subscriber';
import type { StreamHub } from './stream/hub';

/** Everything the HTTP layer uses, built once per process by server.ts. */
export interface ApiDeps {
  config: Config;
  adminToken: string;
  log: Logger;
  db: Db;
  redis: Redis;
  queue: Queue;
  /** The order lifecycle job's queue (archive, expiry, purges), for Bull Board. */
  lifecycleQueue: Queue;
  subscriber: ChannelSubscriber;
  /** The event streams open on this node and their location subscriptions. */
  hub: StreamHub;
  jobs: JobClient;
  events: EventPublisher;
  metrics: ApiMetrics;
  orders: OrdersRepo;
  archive: OrderArchiveRepo;
  commands: CommandsRepo;
  sessions: SessionsRepo;
  locations: LocationsRepo;
  /** False once shutdown begins, so that load balancers stop sending work. */
  isAccepting(): boolean;
}
