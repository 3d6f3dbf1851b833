/**
 * A run of a batch job: the deliveries one relay pass owed one subscription (or those an earlier
 * run put back), attempted together, so that what a delivery costs besides its POST (the queue's
 * job, the subscription's read, the log's insert, the event's settlement) is paid once per batch.
 *
 * Each delivery is still its own signed POST with its own `webhook-id`, within its endpoint's
 * share (up to WEBHOOK_ENDPOINT_CONCURRENCY at once; endpoint-guards.ts). Then, in one command
 * each: the attempts are logged, the settled deliveries (delivered, failed for good, disabled)
 * stop being owed by their events and stop waiting; the others are put back as a later batch, on
 * their own schedule (a failed one after its WEBHOOK_RETRY_SCHEDULE wait, one its endpoint's share
 * held back when the share frees). A run that dies anywhere is run again by BullMQ and sends again
 * what it had not settled: at least once, under the same `webhook-id`.
 */
import type { Job } from 'bullmq';
import { bulkhead } from 'cockatiel';
import type { WebhooksConfig } from '@pos/shared/config';
import { type BatchItem, type DeliveryBatchData, retryDelay } from '@pos/shared/queue/webhook-queue';
import type { WebhookDeliveryDoc, WebhookDoc, WebhookOutcome } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import { batchMember } from '@pos/shared/webhooks/delivery-queue';
import { bodyLocation } from '@pos/shared/webhooks/fan-out';
import { type DeliveryDeps, type Endpoint, endpointOf, succeeded } from './attempt';
import { DeliveryHeld } from './endpoint-guards';

/** What became of one item in a run. */
type ItemRun =
  | { item: BatchItem; held: DeliveryHeld }
  | { item: BatchItem; statusCode?: number; error?: string; seconds: number; at: Date };

/** What a batch's run came to, by outcome (`held`: put back unattempted). */
export type BatchRun = Partial<Record<WebhookOutcome | 'held' | 'skipped', number>>;

export async function deliverBatch(
  deps: DeliveryDeps,
  config: WebhooksConfig,
  job: Job<DeliveryBatchData>,
): Promise<BatchRun> {
  const { subscriptionId } = job.data;
  const items = await toSend(deps, job);
  if (items.length === 0) return {};
  const subscription = await deps.webhooks.find(subscriptionId);
  if (!subscription || subscription.disabledAt) {
    await settle(deps, subscriptionId, items);
    return { skipped: items.length };
  }
  const pool = bulkhead(config.endpointConcurrency, items.length);
  const endpoint = await endpointOf(deps, config, subscription);
  const runs = await Promise.all(
    items.map((item) => pool.execute(() => attemptItem(deps, endpoint, subscription, item))),
  );
  const outcomes = await judge(deps, config, subscription, runs);

  await deps.deliveries.recordAll(
    runs.flatMap((run, i) => ('held' in run ? [] : [logEntry(config, subscriptionId, run, outcomes[i]!)])),
  );
  await settle(
    deps,
    subscriptionId,
    items.filter((_, i) => outcomes[i] !== 'retrying' && outcomes[i] !== 'held'),
  );
  await putBack(deps, config, job, runs, outcomes);

  const counts: BatchRun = {};
  runs.forEach((run, i) => {
    const outcome = outcomes[i]!;
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    if ('held' in run) deps.metrics.held.inc({ reason: run.held.reason });
    else {
      deps.metrics.deliveries.inc({ outcome });
      deps.metrics.deliverySeconds.observe(run.seconds);
    }
  });
  deps.log.info({ subscriptionId, batch: job.id, ...counts }, 'webhook delivery batch');
  return counts;
}

/**
 * The items to send: not those dropped past the cap since they were queued (passed over, no
 * longer waiting), and in a run again (its worker died), not those the run before settled.
 */
async function toSend(deps: DeliveryDeps, job: Job<DeliveryBatchData>): Promise<BatchItem[]> {
  const { subscriptionId, items } = job.data;
  const dropped = await deps.pending.dropped(subscriptionId, items);
  if (dropped.size > 0) await deps.pending.settled(subscriptionId, [...dropped]);
  const kept = items.filter((item) => !dropped.has(batchMember(item)));
  if (job.attemptsStarted <= 1 || kept.length === 0) return kept;
  const events = await deps.events.findByEventIds(kept.flatMap((item) => (item.eventId ? [item.eventId] : [])));
  return kept.filter((item) => !item.eventId || events.get(item.eventId)?.undelivered?.[item.webhookId] !== undefined);
}

async function attemptItem(
  deps: DeliveryDeps,
  endpoint: Endpoint,
  subscription: WebhookDoc,
  item: BatchItem,
): Promise<ItemRun> {
  const started = performance.now();
  try {
    const result = await deps.guards.run(subscription._id, () => endpoint(item));
    return { item, ...result, seconds: (performance.now() - started) / 1000, at: new Date() };
  } catch (err) {
    if (err instanceof DeliveryHeld) return { item, held: err };
    throw err;
  }
}

/**
 * Each item's outcome, and the subscription's state after them (one write at most each way): a
 * success clears its failing spell, a 410 or failures past WEBHOOK_DISABLE_AFTER disable it.
 */
async function judge(
  deps: DeliveryDeps,
  config: WebhooksConfig,
  subscription: WebhookDoc,
  runs: ItemRun[],
): Promise<(WebhookOutcome | 'held')[]> {
  const attempted = runs.filter((run): run is Exclude<ItemRun, { held: DeliveryHeld }> => !('held' in run));
  const now = new Date();
  if (attempted.some((run) => succeeded(run)) && subscription.failingSince)
    await deps.webhooks.succeeded(subscription._id);
  let disabled = false;
  if (attempted.some((run) => run.statusCode === 410)) {
    disabled = true;
    await deps.webhooks.disable(subscription._id, `the endpoint answered 410 Gone at ${now.toISOString()}`, now);
  } else if (attempted.some((run) => !succeeded(run))) {
    const failingSince = await deps.webhooks.failed(subscription._id, now);
    if (failingSince && now.getTime() - failingSince.getTime() >= config.disableAfterMs) {
      disabled = true;
      await deps.webhooks.disable(subscription._id, `no delivery succeeded since ${failingSince.toISOString()}`, now);
    }
  }
  const attempts = config.retryScheduleMs.length + 1;
  return runs.map((run) => {
    if (succeeded(run)) return 'delivered';
    if (disabled) return 'disabled';
    if ('held' in run) return 'held';
    return run.item.attempts + 1 >= attempts ? 'failed' : 'retrying';
  });
}

function logEntry(
  config: WebhooksConfig,
  subscriptionId: string,
  run: Exclude<ItemRun, { held: DeliveryHeld }>,
  outcome: WebhookOutcome | 'held',
): WebhookDeliveryDoc {
  const { item, statusCode, error, seconds, at } = run;
  const locationId = bodyLocation(item.body);
  return {
    _id: newId(),
    subscriptionId,
    webhookId: item.webhookId,
    type: item.type,
    ...(locationId === undefined ? {} : { locationId }),
    body: item.body,
    attempt: item.attempts + 1,
    outcome: outcome as WebhookOutcome,
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(error === undefined ? {} : { error }),
    durationMs: Math.round(seconds * 1000),
    at,
    ...(outcome === 'retrying'
      ? { nextRetryAt: new Date(at.getTime() + retryDelay(config.retryScheduleMs, item.attempts + 1)) }
      : {}),
    purgeAt: new Date(at.getTime() + config.logRetentionMs),
  };
}

/**
 * Settled items: no longer owed by their events (first: a crash in between leaves
 * them waiting, to be settled again), then no longer waiting.
 */
async function settle(deps: DeliveryDeps, subscriptionId: string, items: BatchItem[]): Promise<void> {
  await deps.events.settledAll(
    items.flatMap((item) => (item.eventId ? [{ eventId: item.eventId, webhookId: item.webhookId }] : [])),
  );
  await deps.pending.settled(subscriptionId, items.map(batchMember));
}

/**
 * The items to try again, as later batches: the failed after their schedule's wait
 * (an attempt more), the held back when their share frees.
 */
async function putBack(
  deps: DeliveryDeps,
  config: WebhooksConfig,
  job: Job<DeliveryBatchData>,
  runs: ItemRun[],
  outcomes: (WebhookOutcome | 'held')[],
): Promise<void> {
  const now = Date.now();
  const later = new Map<number, BatchItem[]>();
  runs.forEach((run, i) => {
    let at: number;
    let item = run.item;
    if (outcomes[i] === 'held' && 'held' in run) at = run.held.retryAt;
    else if (outcomes[i] === 'retrying') {
      item = { ...item, attempts: item.attempts + 1 };
      at = now + retryDelay(config.retryScheduleMs, item.attempts);
    } else return;
    // (a second apart at most, so that one run puts back a few batches, not one per item)
    const when = Math.ceil(at / 1000) * 1000;
    later.set(when, [...(later.get(when) ?? []), item]);
  });
  for (const [when, items] of later)
    await deps.pending.putBack(job.data.subscriptionId, items, when - now, `${job.id}@${when}`);
}
