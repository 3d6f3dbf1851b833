/**
 * The webhook delivery worker, on the webhook queue: a batch's run (batch.ts), or one attempt per
 * run of a single delivery's job (attempt.ts), which logs the attempt and counts it. A 2xx is success; anything
 * else is retried on WEBHOOK_RETRY_SCHEDULE (BullMQ's backoff) until the schedule runs out; a
 * 410 Gone, or failures without a success for WEBHOOK_DISABLE_AFTER, disable the endpoint.
 * Attempts run within their endpoint's share (endpoint-guards.ts): one held back waits on the
 * queue, unattempted and uncounted, until a slot frees or the circuit's probe is due.
 */
import { DelayedError, Job, UnrecoverableError, Worker } from 'bullmq';
import type { RedisConfig, WebhooksConfig } from '@pos/shared/config';
import {
  type DeliveryBatchData,
  DeliveryJobData,
  isBatch,
  retryDelay,
  WEBHOOK_QUEUE,
  type WebhookJobData,
  webhookPrefix,
} from '@pos/shared/queue/webhook-queue';
import type { RedisClient } from '@pos/shared/redis';
import { withTelemetry } from '@pos/shared/queue/telemetry';
import type { WebhookDoc, WebhookOutcome } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import { bodyLocation } from '@pos/shared/webhooks/fan-out';
import { type Attempt, type DeliveryDeps, endpointOf, succeeded } from './attempt';
import { type BatchRun, deliverBatch } from './batch';
import { DeliveryHeld } from './endpoint-guards';

/**
 * A delivery is over (delivered, failed for good, its endpoint disabled or
 * gone): it no longer waits, and its event no longer owes it.
 */
async function settle(deps: DeliveryDeps, data: DeliveryJobData, jobId: string): Promise<void> {
  await deps.pending.settled(data.subscriptionId, jobId);
  if (data.eventId && !data.redelivery) await deps.events.settled(data.eventId, data.webhookId);
}

/** The attempt's location, its event's (none for a test event). */
function located(body: string): { locationId?: string } {
  const locationId = bodyLocation(body);
  return locationId === undefined ? {} : { locationId };
}

/** An attempt's outcome, and what it changes of its subscription (cleared, failing, disabled). */
async function outcomeOf(
  deps: DeliveryDeps,
  config: WebhooksConfig,
  subscription: WebhookDoc,
  result: Attempt,
  { now, last }: { now: Date; last: boolean },
): Promise<WebhookOutcome> {
  if (succeeded(result)) {
    // A healthy endpoint (nothing to clear) costs no write.
    if (subscription.failingSince) await deps.webhooks.succeeded(subscription._id);
    return 'delivered';
  }
  if (result.statusCode === 410) {
    await deps.webhooks.disable(subscription._id, `the endpoint answered 410 Gone at ${now.toISOString()}`, now);
    return 'disabled';
  }
  const failingSince = await deps.webhooks.failed(subscription._id, now);
  if (failingSince && now.getTime() - failingSince.getTime() >= config.disableAfterMs) {
    await deps.webhooks.disable(subscription._id, `no delivery succeeded since ${failingSince.toISOString()}`, now);
    return 'disabled';
  }
  return last ? 'failed' : 'retrying';
}

/**
 * What a run of a delivery job came to: an attempt's outcome, or nothing to
 * attempt (its subscription removed or disabled).
 */
export type DeliveryRun = WebhookOutcome | 'skipped';

export async function deliver(
  deps: DeliveryDeps,
  config: WebhooksConfig,
  job: Job<DeliveryJobData>,
): Promise<DeliveryRun> {
  const { data } = job;
  const subscription = await deps.webhooks.find(data.subscriptionId);
  // Removed, or disabled since the event: nothing is sent (a redelivery is the operator's call).
  if (!subscription || (subscription.disabledAt && !data.redelivery)) {
    await settle(deps, data, job.id!);
    return 'skipped';
  }

  const number = job.attemptsMade + 1;
  const started = performance.now();
  const endpoint = await endpointOf(deps, config, subscription);
  const result = await deps.guards.run(subscription._id, () => endpoint(data));
  const seconds = (performance.now() - started) / 1000;
  const now = new Date();
  const last = number >= (job.opts.attempts ?? 1);

  const outcome = await outcomeOf(deps, config, subscription, result, { now, last });

  await deps.deliveries.record({
    _id: newId(),
    subscriptionId: subscription._id,
    webhookId: data.webhookId,
    type: data.type,
    ...located(data.body),
    body: data.body,
    attempt: number,
    outcome,
    ...result,
    durationMs: Math.round(seconds * 1000),
    at: now,
    ...(outcome === 'retrying'
      ? { nextRetryAt: new Date(now.getTime() + retryDelay(config.retryScheduleMs, number)) }
      : {}),
    ...(data.redelivery ? { redelivery: true as const } : {}),
    purgeAt: new Date(now.getTime() + config.logRetentionMs),
  });
  if (outcome !== 'retrying') await settle(deps, data, job.id!);
  deps.metrics.deliveries.inc({ outcome });
  deps.metrics.deliverySeconds.observe(seconds);
  deps.log.info(
    {
      webhookId: data.webhookId,
      subscriptionId: subscription._id,
      type: data.type,
      attempt: number,
      outcome,
      ...result,
    },
    'webhook delivery attempt',
  );
  return outcome;
}

/**
 * The delivery worker on its own queue: a batch (batch.ts) puts back what it must try again; a
 * single delivery's failed attempt throws, so BullMQ schedules the next.
 * A delivery its endpoint's share holds back goes back to the queue, delayed, without counting as
 * an attempt (BullMQ's manual delay: moveToDelayed, then DelayedError).
 */
export function startDeliveryWorker(
  connection: RedisClient,
  redis: Pick<RedisConfig, 'prefix' | 'cluster'>,
  config: WebhooksConfig,
  lockDurationMs: number,
  deps: DeliveryDeps,
): Worker<WebhookJobData> {
  const worker = new Worker<WebhookJobData, DeliveryRun | BatchRun>(
    WEBHOOK_QUEUE,
    async (job, token) => {
      if (isBatch(job.data)) return deliverBatch(deps, config, job as Job<DeliveryBatchData>);
      let outcome: DeliveryRun;
      try {
        outcome = await deliver(deps, config, job as Job<DeliveryJobData>);
      } catch (err) {
        if (!(err instanceof DeliveryHeld)) throw err;
        deps.metrics.held.inc({ reason: err.reason });
        await job.moveToDelayed(err.retryAt, token);
        throw new DelayedError();
      }
      if (outcome === 'retrying') throw new Error('delivery attempt failed; retried on the schedule');
      if (outcome === 'failed' || outcome === 'disabled') throw new UnrecoverableError(`delivery ${outcome}`);
      return outcome;
    },
    withTelemetry({
      connection,
      prefix: webhookPrefix(redis),
      concurrency: config.concurrency,
      lockDuration: lockDurationMs,
      stalledInterval: lockDurationMs,
      settings: { backoffStrategy: (attemptsMade: number) => retryDelay(config.retryScheduleMs, attemptsMade) },
    }),
  );
  worker.on('error', (err) => deps.log.error({ err }, 'webhook worker error'));
  return worker;
}
