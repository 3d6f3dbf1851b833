/**
 * Where deliveries are added, with each subscription's cap on waiting deliveries
 * (WEBHOOK_MAX_PENDING): an endpoint that stays down fills its own share, never Redis for every
 * other subscription. Each subscription's waiting deliveries are a sorted set of job ids by the
 * time they were added; the worker takes a delivery out once it is settled (delivered, failed,
 * disabled). Past the cap, the oldest waiting ones are removed from the queue and logged as
 * `dropped` in the delivery log, body and all, so that an operator can redeliver them.
 */
import type { Queue } from 'bullmq';
import type { Counter } from 'prom-client';
import type { Logger } from '../log';
import { DeliveryJobData, deliveryJobOptions, WEBHOOK_JOB } from '../queue/webhook-queue';
import type { RedisClient } from '../redis';
import { newId } from '../store/ids';
import type { EventLogRepo } from '../store/event-log';
import type { WebhookDeliveriesRepo } from '../store/webhooks';

export interface DeliveryQueueDeps {
  queue: Queue<DeliveryJobData>;
  redis: RedisClient;
  /** The webhook queue's key prefix (webhookPrefix): the sets share its hash slot on a cluster. */
  prefix: string;
  retryScheduleMs: number[];
  maxPending: number;
  deliveries: Pick<WebhookDeliveriesRepo, 'record'>;
  /** Where a dropped delivery stops being owed (it is logged, to be redelivered by hand). */
  events: Pick<EventLogRepo, 'settled'>;
  logRetentionMs: number;
  /** `pos_webhook_deliveries_dropped_total`. */
  dropped: Counter;
  log: Logger;
}

/** How many more of the oldest a drop looks at than it must drop: those being attempted are skipped. */
const DROP_SLACK = 16;

export class DeliveryQueue {
  constructor(private readonly deps: DeliveryQueueDeps) {}

  private pendingKey(subscriptionId: string): string {
    return `${this.deps.prefix}:webhook-pending:${subscriptionId}`;
  }

  /** Adds deliveries (a MULTI on the queue's slot), then counts them as waiting (one pipeline), dropping the oldest past the cap. */
  async add(deliveries: DeliveryJobData[], jobId = (d: DeliveryJobData) => d.webhookId): Promise<void> {
    if (deliveries.length === 0) return;
    const { queue, redis, retryScheduleMs, maxPending } = this.deps;
    await queue.addBulk(deliveries.map((data) => ({ name: WEBHOOK_JOB, data, opts: deliveryJobOptions(retryScheduleMs, jobId(data)) })));
    const now = Date.now();
    const subscriptions = [...new Set(deliveries.map((d) => d.subscriptionId))];
    const pipeline = redis.pipeline();
    // scored by when they were added, those added together in the order given (a microsecond apart)
    deliveries.forEach((delivery, i) => pipeline.zadd(this.pendingKey(delivery.subscriptionId), 'NX', now + i / 1000, jobId(delivery)));
    for (const id of subscriptions) pipeline.zcard(this.pendingKey(id));
    const results = (await pipeline.exec()) ?? [];
    const counts = results.slice(deliveries.length).map(([, count]) => Number(count));
    await Promise.all(subscriptions.map((id, i) => ((counts[i] ?? 0) > maxPending ? this.dropOldest(id, counts[i]! - maxPending) : undefined)));
  }

  /** A delivery settled (delivered, failed for good, its endpoint disabled or gone): it no longer waits. */
  async settled(subscriptionId: string, jobId: string): Promise<void> {
    await this.deps.redis.zrem(this.pendingKey(subscriptionId), jobId);
  }

  /** How many deliveries wait for the subscription. */
  pending(subscriptionId: string): Promise<number> {
    return this.deps.redis.zcard(this.pendingKey(subscriptionId));
  }

  /**
   * Drops the `count` oldest deliveries that wait. One being attempted right now cannot be removed
   * (nor can one a moment from its next attempt, which passes through active too): it stays, counted,
   * and the next oldest goes instead.
   */
  private async dropOldest(subscriptionId: string, count: number): Promise<void> {
    const { queue, redis, deliveries, logRetentionMs, dropped, log } = this.deps;
    const key = this.pendingKey(subscriptionId);
    const candidates = await redis.zrange(key, 0, count + DROP_SLACK - 1);
    let done = 0;
    for (const jobId of candidates) {
      if (done >= count) break;
      const job = await queue.getJob(jobId);
      if (!job) {
        // settled meanwhile: it waits no more
        await redis.zrem(key, jobId);
        continue;
      }
      if ((await queue.remove(jobId)) !== 1) continue;
      await redis.zrem(key, jobId);
      done += 1;
      const now = new Date();
      await deliveries.record({
        _id: newId(),
        subscriptionId,
        webhookId: job.data.webhookId,
        type: job.data.type,
        body: job.data.body,
        attempt: job.attemptsMade + 1,
        outcome: 'dropped',
        error: `more than WEBHOOK_MAX_PENDING (${this.deps.maxPending}) deliveries waited for this endpoint: the oldest was dropped`,
        durationMs: 0,
        at: now,
        purgeAt: new Date(now.getTime() + logRetentionMs),
      });
      if (job.data.eventId) await this.deps.events.settled(job.data.eventId, job.data.webhookId);
      dropped.inc();
      log.warn({ subscriptionId, webhookId: job.data.webhookId, type: job.data.type }, 'webhook delivery dropped: too many waiting for its endpoint');
    }
  }
}
