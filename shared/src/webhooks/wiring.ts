/**
 * The webhook side of a process, made once by each composition root (the API's and the
 * worker's): the delivery queue, where deliveries are added (with each subscription's cap), and
 * the fan-out of events to subscriptions.
 */
import { Counter, type Registry } from 'prom-client';
import type { Db } from 'mongodb';
import type { RedisConfig, WebhooksConfig } from '../config';
import type { Logger } from '../log';
import { createWebhookQueue, webhookPrefix } from '../queue/webhook-queue';
import type { RedisClient } from '../redis';
import { WebhookDeliveriesRepo, WebhooksRepo } from '../store/webhooks';
import { DeliveryQueue } from './delivery-queue';
import { WebhookEmitter } from './emitter';

export interface WebhookWiring {
  queue: ReturnType<typeof createWebhookQueue>;
  subscriptions: WebhooksRepo;
  log: WebhookDeliveriesRepo;
  deliveries: DeliveryQueue;
  emitter: WebhookEmitter;
}

export function createWebhooks(options: { db: Db; redis: RedisClient; redisConfig: Pick<RedisConfig, 'prefix' | 'cluster'>; webhooks: WebhooksConfig; registry: Registry; log: Logger }): WebhookWiring {
  const { db, redis, redisConfig, webhooks: config, registry, log } = options;
  const queue = createWebhookQueue(redis, redisConfig, log);
  const subscriptions = new WebhooksRepo(db);
  const deliveryLog = new WebhookDeliveriesRepo(db);
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
    deliveries: deliveryLog,
    logRetentionMs: config.logRetentionMs,
    dropped,
    log,
  });
  const emitter = new WebhookEmitter({ redis, prefix: redisConfig.prefix, webhooks: subscriptions, deliveries });
  return { queue, subscriptions, log: deliveryLog, deliveries, emitter };
}
