/**
 * Where deliveries are added, with each subscription's cap on waiting deliveries
 * (WEBHOOK_MAX_PENDING): an endpoint that stays down fills its own share, never Redis for every
 * other subscription. Each subscription's waiting deliveries are a sorted set by the time they
 * were added; the worker takes a delivery out once it is settled (delivered, failed, disabled).
 * Past the cap, the oldest waiting ones are dropped and logged as `dropped` in the delivery log,
 * body and all, so that an operator can redeliver them.
 *
 * Two forms. A single delivery (a test event, a redelivery) is a job of its own, counted by its
 * job id. The relay's deliveries go in batches: per pass, one job per subscription carrying its
 * deliveries, each counted as `<webhook-id>.<event id>`; the set is then also what tells a
 * delivery queued again (a relay that ran twice, the minute's restore) from a new one, as the
 * single jobs' ids do. A batch item dropped past the cap is named in the subscription's dropped
 * set, which its batch's run reads before it sends.
 */
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Counter } from 'prom-client';
import type { Logger } from '../log';
import {
  type BatchItem,
  batchJobOptions,
  DeliveryJobData,
  deliveryJobOptions,
  WEBHOOK_BATCH_JOB,
  WEBHOOK_JOB,
  type WebhookJobData,
} from '../queue/webhook-queue';
import type { RedisClient } from '../redis';
import type { WebhookDeliveryDoc } from '../store/documents';
import { newId } from '../store/ids';
import type { EventLogRepo } from '../store/event-log';
import type { WebhookDeliveriesRepo } from '../store/webhooks';
import { bodyLocation, eventBody } from './fan-out';

export interface DeliveryQueueDeps {
  queue: Queue<WebhookJobData>;
  redis: RedisClient;
  /** The webhook queue's key prefix (webhookPrefix): the sets share its hash slot on a cluster. */
  prefix: string;
  retryScheduleMs: number[];
  maxPending: number;
  deliveries: Pick<WebhookDeliveriesRepo, 'record' | 'recordAll'>;
  /**
   * Where a dropped delivery stops being owed (it is logged, to be redelivered by
   * hand), and where a dropped batch item's body is found.
   */
  events: Pick<EventLogRepo, 'settled' | 'settledAll' | 'findByEventIds'>;
  logRetentionMs: number;
  /** `pos_webhook_deliveries_dropped_total`. */
  dropped: Counter;
  log: Logger;
}

/** How many more of the oldest a drop looks at than it must drop: those being attempted are skipped. */
const DROP_SLACK = 16;

/** A batch item's member of its subscription's set: its webhook-id and its event's id. */
export const batchMember = (item: Pick<BatchItem, 'webhookId' | 'eventId'>): string =>
  `${item.webhookId}.${item.eventId ?? ''}`;
const isBatchMember = (member: string) => member.includes('.');

export class DeliveryQueue {
  /** How long a member may wait before a restore takes it for lost: the whole retry schedule, and an hour. */
  private readonly staleAfterMs: number;

  constructor(private readonly deps: DeliveryQueueDeps) {
    this.staleAfterMs = deps.retryScheduleMs.reduce((sum, ms) => sum + ms, 0) + 3_600_000;
  }

  private pendingKey(subscriptionId: string): string {
    return `${this.deps.prefix}:webhook-pending:${subscriptionId}`;
  }

  private droppedKey(subscriptionId: string): string {
    return `${this.deps.prefix}:webhook-dropped:${subscriptionId}`;
  }

  /**
   * Adds single deliveries (a MULTI on the queue's slot), then counts them as
   * waiting (one pipeline), dropping the oldest past the cap.
   */
  async add(deliveries: DeliveryJobData[], jobId = (d: DeliveryJobData) => d.webhookId): Promise<void> {
    if (deliveries.length === 0) return;
    const { queue, retryScheduleMs } = this.deps;
    await queue.addBulk(
      deliveries.map((data) => ({ name: WEBHOOK_JOB, data, opts: deliveryJobOptions(retryScheduleMs, jobId(data)) })),
    );
    await this.count(deliveries.map((delivery) => [delivery.subscriptionId, jobId(delivery)]));
  }

  /**
   * Adds the relay's deliveries, one batch job per subscription, in the order given; those already
   * waiting are left as they are. The job's id is a hash of its members: a pass run again after a
   * crash adds the same job again, which is nothing.
   */
  async addBatches(deliveries: DeliveryJobData[]): Promise<void> {
    if (deliveries.length === 0) return;
    const bySubscription = new Map<string, BatchItem[]>();
    for (const { subscriptionId, webhookId, type, body, eventId } of deliveries) {
      const items = bySubscription.get(subscriptionId) ?? [];
      items.push({ webhookId, type, body, ...(eventId === undefined ? {} : { eventId }), attempts: 0 });
      bySubscription.set(subscriptionId, items);
    }
    const subscriptions = [...bySubscription.keys()];
    const waiting = await this.waiting(subscriptions.map((id) => [id, bySubscription.get(id)!.map(batchMember)]));
    const jobs = subscriptions.flatMap((subscriptionId, i) => {
      const items = bySubscription.get(subscriptionId)!.filter((item) => !waiting[i]!.has(batchMember(item)));
      return items.length === 0 ? [] : [{ subscriptionId, items }];
    });
    if (jobs.length === 0) return;
    await this.deps.queue.addBulk(
      jobs.map((data) => ({
        name: WEBHOOK_BATCH_JOB,
        data,
        opts: batchJobOptions(batchJobId(data.subscriptionId, data.items), 0),
      })),
    );
    await this.count(
      jobs.flatMap(({ subscriptionId, items }) =>
        items.map((item): [string, string] => [subscriptionId, batchMember(item)]),
      ),
    );
  }

  /**
   * Puts a batch's items back for a later run, after `delayMs` (still counted as waiting);
   * `after` names the run, so that a run again puts back the same job.
   */
  async putBack(subscriptionId: string, items: BatchItem[], delayMs: number, after: string): Promise<void> {
    if (items.length === 0) return;
    await this.deps.queue.add(
      WEBHOOK_BATCH_JOB,
      { subscriptionId, items },
      batchJobOptions(batchJobId(subscriptionId, items, after), Math.max(0, Math.round(delayMs))),
    );
  }

  /** Of a batch's items, those dropped past the cap since it was queued (logged and settled then): not to be sent. */
  async dropped(subscriptionId: string, items: BatchItem[]): Promise<Set<string>> {
    const members = items.map(batchMember);
    const flags = await this.deps.redis.smismember(this.droppedKey(subscriptionId), ...members);
    return new Set(members.filter((_, i) => flags[i] === 1));
  }

  /**
   * Deliveries settled (delivered, failed for good, their endpoint disabled or
   * gone), or dropped and passed over: they no longer wait.
   */
  async settled(subscriptionId: string, members: string | string[]): Promise<void> {
    const all = typeof members === 'string' ? [members] : members;
    if (all.length === 0) return;
    const pipeline = this.deps.redis.pipeline().zrem(this.pendingKey(subscriptionId), ...all);
    if (all.some(isBatchMember)) pipeline.srem(this.droppedKey(subscriptionId), ...all.filter(isBatchMember));
    await pipeline.exec();
  }

  /** How many deliveries wait for the subscription. */
  pending(subscriptionId: string): Promise<number> {
    return this.deps.redis.zcard(this.pendingKey(subscriptionId));
  }

  /** Which of each subscription's members wait (one pipeline); one waiting past any schedule counts as lost. */
  private async waiting(lists: [string, string[]][]): Promise<Set<string>[]> {
    const pipeline = this.deps.redis.pipeline();
    for (const [subscriptionId, members] of lists) pipeline.zmscore(this.pendingKey(subscriptionId), ...members);
    const results = (await pipeline.exec()) ?? [];
    const oldest = Date.now() - this.staleAfterMs;
    return lists.map(([, members], i) => {
      const [err, scores] = results[i] ?? [new Error('no answer')];
      if (err) throw err;
      return new Set(
        members.filter((_, k) => {
          const score = (scores as (string | null)[])[k];
          return score != null && Number(score) >= oldest;
        }),
      );
    });
  }

  /**
   * Counts deliveries as waiting (scored by when they were added, those added
   * together a microsecond apart), dropping the oldest past the cap.
   */
  private async count(added: [subscriptionId: string, member: string][]): Promise<void> {
    const now = Date.now();
    const subscriptions = [...new Set(added.map(([id]) => id))];
    const pipeline = this.deps.redis.pipeline();
    added.forEach(([subscriptionId, member], i) =>
      pipeline.zadd(this.pendingKey(subscriptionId), 'NX', now + i / 1000, member),
    );
    for (const id of subscriptions) pipeline.zcard(this.pendingKey(id));
    const results = (await pipeline.exec()) ?? [];
    const counts = results.slice(added.length).map(([, count]) => Number(count));
    const { maxPending } = this.deps;
    await Promise.all(
      subscriptions.map((id, i) =>
        (counts[i] ?? 0) > maxPending ? this.dropOldest(id, counts[i]! - maxPending) : undefined,
      ),
    );
  }

  /**
   * Drops the `count` oldest deliveries that wait. A single job being attempted right now cannot
   * be removed (nor can one a moment from its next attempt, which passes through active too): it
   * stays, counted, and the next oldest goes instead. A batch item is taken out of its set, which
   * its batch's run reads before it sends: it is not sent.
   */
  private async dropOldest(subscriptionId: string, count: number): Promise<void> {
    const key = this.pendingKey(subscriptionId);
    const candidates = await this.deps.redis.zrange(key, 0, count + DROP_SLACK - 1);
    const items = candidates.filter(isBatchMember).slice(0, count);
    const dropped = items.length > 0 ? await this.dropItems(subscriptionId, items) : 0;
    let done = dropped;
    for (const jobId of candidates.filter((member) => !isBatchMember(member))) {
      if (done >= count) break;
      if (await this.dropJob(subscriptionId, jobId)) done += 1;
    }
  }

  /** Drops a single delivery's job; false when it is being attempted (or was settled meanwhile). */
  private async dropJob(subscriptionId: string, jobId: string): Promise<boolean> {
    const { queue, redis } = this.deps;
    const key = this.pendingKey(subscriptionId);
    const job = await queue.getJob(jobId);
    if (!job || !('webhookId' in job.data)) {
      // settled meanwhile: it waits no more
      await redis.zrem(key, jobId);
      return false;
    }
    if ((await queue.remove(jobId)) !== 1) return false;
    await redis.zrem(key, jobId);
    const { data } = job;
    await this.logDropped([
      { subscriptionId, webhookId: data.webhookId, type: data.type, body: data.body, attempt: job.attemptsMade + 1 },
    ]);
    if (data.eventId) await this.deps.events.settled(data.eventId, data.webhookId);
    return true;
  }

  /**
   * Drops batch items: named dropped (their batch will not send them),
   * logged with the body their event gives, settled.
   */
  private async dropItems(subscriptionId: string, members: string[]): Promise<number> {
    const [[, removed] = []] =
      (await this.deps.redis
        .pipeline()
        .zrem(this.pendingKey(subscriptionId), ...members)
        .sadd(this.droppedKey(subscriptionId), ...members)
        .exec()) ?? [];
    if (!removed) return 0;
    const owed = members.map((member) => ({
      webhookId: member.slice(0, member.indexOf('.')),
      eventId: member.slice(member.indexOf('.') + 1),
    }));
    const events = await this.deps.events.findByEventIds(owed.map((o) => o.eventId).filter((id) => id !== ''));
    await this.logDropped(
      owed.flatMap(({ webhookId, eventId }) => {
        const event = events.get(eventId);
        return event
          ? [{ subscriptionId, webhookId, type: event.type, body: JSON.stringify(eventBody(event)), attempt: 1 }]
          : [];
      }),
    );
    await this.deps.events.settledAll(owed.filter((o) => o.eventId !== ''));
    return Number(removed);
  }

  private async logDropped(
    drops: Pick<WebhookDeliveryDoc, 'subscriptionId' | 'webhookId' | 'type' | 'body' | 'attempt'>[],
  ): Promise<void> {
    if (drops.length === 0) return;
    const now = new Date();
    const error =
      `more than WEBHOOK_MAX_PENDING (${this.deps.maxPending}) deliveries ` +
      'waited for this endpoint: the oldest was dropped';
    await this.deps.deliveries.recordAll(
      drops.map((drop) => {
        const locationId = bodyLocation(drop.body);
        return {
          _id: newId(),
          ...drop,
          ...(locationId === undefined ? {} : { locationId }),
          outcome: 'dropped',
          error,
          durationMs: 0,
          at: now,
          purgeAt: new Date(now.getTime() + this.deps.logRetentionMs),
        };
      }),
    );
    for (const drop of drops) {
      this.deps.dropped.inc();
      this.deps.log.warn(
        { subscriptionId: drop.subscriptionId, webhookId: drop.webhookId, type: drop.type },
        'webhook delivery dropped: too many waiting for its endpoint',
      );
    }
  }
}

/** `b_` and a hash of the subscription and its items' members (and of the run that put them back, if one did). */
function batchJobId(subscriptionId: string, items: BatchItem[], after = ''): string {
  const hash = createHash('sha256')
    .update(`${subscriptionId}\n${after}\n${items.map(batchMember).join('\n')}`)
    .digest('base64url')
    .slice(0, 24);
  return `b_${hash}`;
}
