import type { Logger } from '@pos/shared/log';
import type { OrderState } from '@pos/shared/domain/order-state';
import type { LifecycleCounts, LifecycleRun } from '@pos/shared/queue/lifecycle';
import type { OrderArchiveRepo } from '@pos/shared/store/archive';
import type { AuditRepo } from '@pos/shared/store/audit';
import type { ArchivedOrderDoc } from '@pos/shared/store/documents';
import type { CommandsRepo } from '@pos/shared/store/commands';
import type { EventLogRepo } from '@pos/shared/store/event-log';
import type { OrdersRepo } from '@pos/shared/store/orders';
import type { WebhookDeliveriesRepo } from '@pos/shared/store/webhooks';

export interface LifecycleDeps {
  orders: Pick<OrdersRepo, 'untouchedSince' | 'removeIfUnchanged' | 'versionsOf' | 'purgeAppliedJobs'>;
  archive: Pick<OrderArchiveRepo, 'keep' | 'dropCopies' | 'purge'>;
  commands: Pick<CommandsRepo, 'purgeExpired'>;
  /** The webhook delivery log (its TTL index does the same where a TTL monitor runs). */
  webhookDeliveries?: Pick<WebhookDeliveriesRepo, 'purge'>;
  /**
   * The audit log, oldest records first (no TTL index: it would cut the
   * hash chain in the middle). Absent: not purged.
   */
  audit?: Pick<AuditRepo, 'purge'>;
  /** The event log, oldest first (absent: not purged). */
  events?: Pick<EventLogRepo, 'purge'>;
  log: Logger;
  /** Test-only: the point between the archive copy and the hot delete (FAULT_INJECT crashes there). */
  checkpoint?(point: 'mid-archive'): void | Promise<void>;
}

export interface LifecycleSettings {
  archiveAfterMs: number;
  retentionMs: number;
  selectingTtlMs: number;
  /** EVENT_RETENTION. */
  eventRetentionMs?: number;
}

export interface RunLimits {
  /** Documents per MongoDB command. */
  batchSize: number;
  /** No batch starts after this long (each step still gets its first batch). */
  budgetMs: number;
  /** Aborted at shutdown: the run stops after the batch in hand. */
  signal?: AbortSignal;
}

const FINISHED: OrderState[] = ['COMPLETED', 'ABORTED'];
/** Orders never submitted: carts, and finished carts (NEW) a customer walked away from. */
const UNSUBMITTED: OrderState[] = ['SELECTING', 'NEW'];

/** Batches of a step until one comes back short, or the time budget is spent (then the run is not complete). */
function drainer(limits: RunLimits, endsAt: number) {
  let complete = true;
  const drain = async (batch: () => Promise<{ read: number; done: number }>): Promise<number> => {
    let done = 0;
    for (let first = true; ; first = false) {
      if (!first && (Date.now() >= endsAt || limits.signal?.aborted)) {
        complete = false;
        return done;
      }
      const result = await batch();
      done += result.done;
      if (result.read < limits.batchSize) return done;
    }
  };
  return { drain, complete: () => complete };
}

/** One batch of orders in `states` untouched for `idleFor` moved to the archive (copy, then delete if unchanged). */
function mover(deps: LifecycleDeps, settings: LifecycleSettings, now: Date, batchSize: number) {
  return (states: OrderState[], idleFor: number, mark: Partial<ArchivedOrderDoc>) => async () => {
    const batch = await deps.orders.untouchedSince(states, new Date(now.getTime() - idleFor), batchSize);
    if (batch.length === 0) return { read: 0, done: 0 };
    const purgeAt = new Date(now.getTime() + settings.retentionMs);
    await deps.archive.keep(batch.map((order) => ({ ...order, ...mark, archivedAt: now, purgeAt })));
    await deps.checkpoint?.('mid-archive');
    const removed = await deps.orders.removeIfUnchanged(batch);
    if (removed < batch.length) {
      const stored = await deps.orders.versionsOf(batch.map((order) => order._id));
      const changed = batch.filter((order) => stored.has(order._id) && stored.get(order._id) !== order.version);
      const dropped = await deps.archive.dropCopies(changed);
      deps.log.info(
        { changed: changed.length, dropped },
        'orders changed while being archived; they stay in the hot collection',
      );
    }
    return { read: batch.length, done: removed };
  };
}

/** A purge step: as many removed as read (what purges remove, they read by the same bound). */
const purging = (purge: () => Promise<number>) => async () => {
  const removed = await purge();
  return { read: removed, done: removed };
};

/** What each purge removes, or undefined where the run has nothing of it to purge. */
function purges(
  deps: LifecycleDeps,
  settings: LifecycleSettings,
  now: Date,
  batchSize: number,
): Record<Exclude<keyof LifecycleCounts, 'archived' | 'expired'>, (() => Promise<number>) | undefined> {
  const { webhookDeliveries, audit, events } = deps;
  const eventsBefore = new Date(now.getTime() - (settings.eventRetentionMs ?? 0));
  return {
    commandsPurged: () => deps.commands.purgeExpired(now, batchSize),
    purged: () => deps.archive.purge(now, batchSize),
    appliedJobsPurged: () => deps.orders.purgeAppliedJobs(now, batchSize),
    deliveriesPurged: webhookDeliveries && (() => webhookDeliveries.purge(now, batchSize)),
    auditPurged: audit && (() => audit.purge(now, batchSize, deps.log)),
    eventsPurged:
      events && settings.eventRetentionMs !== undefined ? () => events.purge(eventsBefore, batchSize) : undefined,
  };
}

/**
 * One run of the lifecycle job: expired commands removed, expired (unsubmitted) orders and finished orders
 * moved to the archive, archived orders, applied-job ledger entries, audit records and events past
 * retention removed. Batched and bounded in time;
 * every step is idempotent, so a run that crashed anywhere is finished by the next one (and two
 * runs that overlap, which the queue's global concurrency prevents, would not harm each other).
 *
 * An order moves by copy-then-delete: the copy is written to the archive by `_id` (replacing a
 * copy a crashed run left), then the hot document is deleted only if it is still the version
 * copied. An order is therefore never in neither collection; one that changed in between (a cart
 * edited at the last moment) stays hot and its stale copy is dropped.
 */
export async function runLifecycle(
  deps: LifecycleDeps,
  settings: LifecycleSettings,
  limits: RunLimits,
  now = new Date(),
): Promise<LifecycleRun> {
  const started = Date.now();
  const { drain, complete } = drainer(limits, started + limits.budgetMs);
  const move = mover(deps, settings, now, limits.batchSize);
  const purge = purges(deps, settings, now, limits.batchSize);
  const run = async (step: (() => Promise<number>) | undefined) => (step ? drain(purging(step)) : 0);
  const commandsPurged = await run(purge.commandsPurged);
  const expired = await drain(move(UNSUBMITTED, settings.selectingTtlMs, { expiredAt: now }));
  const archived = await drain(move(FINISHED, settings.archiveAfterMs, {}));
  const purged = await run(purge.purged);
  const appliedJobsPurged = await run(purge.appliedJobsPurged);
  const deliveriesPurged = await run(purge.deliveriesPurged);
  const auditPurged = await run(purge.auditPurged);
  const eventsPurged = await run(purge.eventsPurged);
  return {
    archived,
    expired,
    purged,
    commandsPurged,
    deliveriesPurged,
    auditPurged,
    eventsPurged,
    appliedJobsPurged,
    durationMs: Date.now() - started,
    complete: complete(),
  };
}
