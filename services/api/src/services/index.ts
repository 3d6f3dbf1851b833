/**
 * The API's services, made once per node (server.ts): what the handlers call once they have
 * parsed a request. Each takes only the repository methods it needs.
 */
import type { Queue } from 'bullmq';
import type { Config } from '@pos/shared/config';
import type { Announcer } from '@pos/shared/events/announcements';
import type { OrderDeadlineJob } from '@pos/shared/queue/order-deadlines';
import type { SnoozeEndJob } from '@pos/shared/queue/snooze-ends';
import type { RedisClient } from '@pos/shared/redis';
import type { Repos } from '@pos/shared/store/repos';
import type { DeliveryQueue } from '@pos/shared/webhooks/delivery-queue';
import type { SecretBox } from '@pos/shared/webhooks/secrets';
import type { JobClient } from '../jobs/job-client';
import type { ApiMetrics } from '../metrics/api-metrics';
import { AuditLog } from './audit-log';
import { Commands } from './commands';
import { CustomerLimits } from './customer-limits';
import { EventFeed } from './events';
import { Locations } from './locations';
import { Menus } from './menus';
import { NewWork } from './new-work';
import { OrderIntake } from './order-intake';
import { Operators } from './operators';
import { Orders } from './orders';
import { Sessions } from './sessions';
import { Transitions } from './transitions';
import { Webhooks } from './webhooks';

export interface Services {
  orders: Orders;
  newWork: NewWork;
  commands: Commands;
  transitions: Transitions;
  orderIntake: OrderIntake;
  customerLimits: CustomerLimits;
  locations: Locations;
  menus: Menus;
  sessions: Sessions;
  operators: Operators;
  webhooks: Webhooks;
  auditLog: AuditLog;
  eventFeed: EventFeed;
}

export interface ServiceDeps {
  config: Config;
  repos: Repos;
  redis: RedisClient;
  announcer: Announcer;
  jobs: Pick<JobClient, 'run'>;
  orderDeadlines: Queue<OrderDeadlineJob>;
  snoozeEnds: Queue<SnoozeEndJob>;
  deliveries: Pick<DeliveryQueue, 'add'>;
  webhookSecrets: SecretBox;
  metrics: Pick<ApiMetrics, 'eventsPublished' | 'menuCarts' | 'menuDocumentReads'>;
  /** A new API key (or operator token), signed under API_KEY_SECRET. */
  newApiKey(): string;
}

export function createServices(deps: ServiceDeps): Services {
  const { config, repos, announcer } = deps;
  // the menus ask registers to fetch a menu with a command, as new work
  const newWork = new NewWork({
    ...repos,
    announcer,
    orderDeadlines: deps.orderDeadlines,
    orderDeadlineSettings: config.orderDeadlines,
    commandTtlMs: config.orders.commandTtlMs,
    published: deps.metrics.eventsPublished,
  });
  return {
    orders: new Orders(repos),
    newWork,
    commands: new Commands({ commands: repos.commands }),
    transitions: new Transitions(deps.jobs),
    orderIntake: new OrderIntake({ locations: repos.locations, pauseWhenOffline: config.presence.pauseWhenOffline }),
    customerLimits: new CustomerLimits({
      orders: repos.orders,
      commands: repos.commands,
      maxOpenOrders: config.limits.customerMaxOpenOrders,
      maxCommands: config.limits.customerMaxCommands,
    }),
    locations: new Locations({
      locations: repos.locations,
      announcer,
      redis: deps.redis,
      prefix: config.redis.prefix,
      presenceWindowMs: config.presence.windowMs,
      failureThreshold: config.orders.failureThreshold,
    }),
    menus: new Menus({
      menus: repos.menus,
      locations: repos.locations,
      newWork,
      snoozeEnds: deps.snoozeEnds,
      limits: config.menus.limits,
      metrics: { carts: deps.metrics.menuCarts, documentReads: deps.metrics.menuDocumentReads },
    }),
    sessions: new Sessions({
      sessions: repos.sessions,
      announcer,
      newApiKey: deps.newApiKey,
      keyRotationGraceMs: config.auth.keyRotationGraceMs,
    }),
    operators: new Operators({ operators: repos.operators, announcer, newApiKey: deps.newApiKey }),
    webhooks: new Webhooks({
      webhooks: repos.webhooks,
      deliveryLog: repos.webhookDeliveries,
      deliveries: deps.deliveries,
      secrets: deps.webhookSecrets,
      redis: deps.redis,
      prefix: config.redis.prefix,
      allowPrivate: config.webhooks.allowPrivate,
      rotationGraceMs: config.auth.keyRotationGraceMs,
    }),
    auditLog: new AuditLog(repos.audit),
    eventFeed: new EventFeed(repos.events),
  };
}
