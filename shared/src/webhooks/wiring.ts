/**
 * The webhook side of a process, made once by each composition root (the API's and the
 * worker's): the delivery queue, where deliveries are added (with each subscription's cap), and
 * the fan-out of recorded events to subscriptions (the worker's relay uses it).
 */
import { Counter, type Registry } from 'prom-client';
import type { RedisConfig, WebhooksConfig } from '../config';
import type { Logger } from '../log';
import { createWebhookQueue, webhookPrefix } from '../queue/webhook-queue';
import type { RedisClient } from '../redis';
import type { Repos } from '../store/repos';
import { DeliveryQueue } from './delivery-queue';
import { WebhookFanOut } from './fan-out';

export interface WebhookWiring {
  queue: ReturnType<typeof createWebhookQueue>;
  deliveries: DeliveryQueue;
  fanOut: WebhookFanOut;
}

export function createWebhooks(options: {
  repos: Pick<Repos, 'webhooks' | 'webhookDeliveries' | 'events'>;
  /** Plain commands: the subscriptions' waiting counts, the fan-out's generation. */
  redis: RedisClient;
  /**
   * The connection the process's BullMQ queues share (BullMQ defines its
   * scripts there; every other command stays off it).
   */
  queueRedis: RedisClient;
  redisConfig: Pick<RedisConfig, 'prefix' | 'cluster'>;
  webhooks: WebhooksConfig;
  registry: Registry;
  log: Logger;
}): WebhookWiring {
  const { repos, redis, queueRedis, redisConfig, webhooks: config, registry, log } = options;
  const queue = createWebhookQueue(queueRedis, redisConfig, log);
  const dropped = new Counter({
    name: 'pos_webhook_deliveries_dropped_total',
    help: 'Webhook deliveries dropped unattempted because their subscription had more than WEBHOOK_MAX_PENDING waiting',
    registers: [registry],
  });
  const deliveries = new DeliveryQueue({
    queue,
    redis,
    prefix: webhookPrefix(redisConfig),
    retryScheduleMs: config.retryScheduleMs,
    maxPending: config.maxPending,
    deliveries: repos.webhookDeliveries,
    events: repos.events,
    logRetentionMs: config.logRetentionMs,
    dropped,
    log,
  });
  const fanOut = new WebhookFanOut({ redis, prefix: redisConfig.prefix, webhooks: repos.webhooks });
  return { queue, deliveries, fanOut };
}
