import { Decision, DecisionInputs, decide, needsFailureThreshold, needsSession } from '@pos/shared/domain/order-state';
import { problems } from '@pos/shared/domain/problem';
import type { OrderDoc } from '@pos/shared/store/documents';
import { toOrderRecord } from '@pos/shared/domain/records';
import { isKeyedJobId, type JobOutcome, notAppliedOutcome, type OrderActionJob } from '@pos/shared/queue/jobs';
import { findOrder } from '@pos/shared/store/archive';
import { guardedRetry, RACED, RacesLost } from '@pos/shared/store/guarded-retry';
import { hasApplied } from '@pos/shared/store/orders';
import type { JobContext } from './context';

type Apply = Extract<Decision, { type: 'apply' }>;

/**
 * Applies one action to one order: read, decide with the state machine, write conditionally on
 * the version read. A customer's finish or submit reads its session after the order, each time
 * (why that order of reads places nothing for a closed session: see session-close.ts).
 * A re-run of a job that already wrote (worker crash), or a keyed retry whose earlier attempt
 * wrote, finds its id on the order or in its applied-jobs ledger (mayHaveWritten). The write
 * leaves its events in the order's outbox for the relay (OrderWriter).
 * An order this worker has cached is tried first without a read: its write proves it current.
 * An order no longer in the hot collection is read from the archive and answered as before it
 * moved (200 unchanged, 409 naming its state); an archived order is never written.
 */
export async function applyOrderAction(ctx: JobContext, job: OrderActionJob): Promise<JobOutcome> {
  // Only a failure report asks for the threshold (kept by the worker until its location changes:
  // see FailureThresholds), so other jobs pay nothing for it.
  const thresholdRead = needsFailureThreshold(job.action) ? ctx.failureThreshold(job.scope.locationId) : undefined;
  thresholdRead?.catch(() => undefined); // awaited below, unless the order is missing
  const cached = ctx.answered ? undefined : ctx.orderCache.get(job.scope, job.orderNumber);
  if (cached) {
    const outcome = await tryCached(ctx, job, cached, thresholdRead);
    if (outcome) return outcome;
  }
  try {
    return await guardedRetry((attempt) => decideAndWrite(ctx, job, thresholdRead, attempt));
  } catch (err) {
    if (err instanceof RacesLost) return { status: 409, problem: err.problem };
    throw err;
  }
}

/** One attempt on a fresh read: the outcome, or RACED when the order changed under the write. */
async function decideAndWrite(
  ctx: JobContext,
  job: OrderActionJob,
  thresholdRead: Promise<number> | undefined,
  attempt: number,
): Promise<JobOutcome | typeof RACED> {
  const found = await findOrder(ctx, job.scope, job.orderNumber);
  if (!found) return { status: 400, problem: problems.orderNotFound() };
  const { order, archived } = found;
  if (!archived) ctx.orderCache.set(order);

  if (
    ctx.answered ||
    (mayHaveWritten(ctx) ? await ctx.orders.appliedEver(order, ctx.jobId) : hasApplied(order, ctx.jobId))
  ) {
    // The write landed before a crash; the announcement may not have.
    ctx.log.info({ orderNumber: order.number }, 'job already applied; answering with the order');
    await ctx.announcer.order(order);
    // (the run that wrote may have died before adding the placement's deadlines)
    if (order.state === 'PLACED') await ctx.followUps.placed(order);
    return { status: 200, body: toOrderRecord(order) };
  }

  const now = new Date();
  const decision = decide(order, job.action, await inputsAfterReading(ctx, job, order, thresholdRead), now);
  if (decision.type === 'unchanged') return { status: 200, body: toOrderRecord(order) };
  if (decision.type === 'conflict') return { status: 409, problem: problems.conflict(decision.detail) };
  // Only finished orders are archived, and the state machine changes nothing about them.
  if (archived)
    return { status: 409, problem: problems.conflict(`Order is ${order.state} and archived; it cannot change`) };

  const outcome = await commit(ctx, job, order, decision, now);
  if (outcome) return outcome;
  ctx.log.debug({ orderNumber: order.number, attempt }, 'order changed since read; deciding again');
  return RACED;
}

/**
 * The cached order, when deciding on it leads to a write that succeeds; undefined (and the
 * order forgotten) in every other case, which the caller then decides on a fresh read.
 */
async function tryCached(
  ctx: JobContext,
  job: OrderActionJob,
  order: OrderDoc,
  thresholdRead: Promise<number> | undefined,
): Promise<JobOutcome | undefined> {
  // (a write at the cached version would prove only that nothing wrote since, not before)
  if (hasApplied(order, ctx.jobId) || (order.appliedJobsMoved && mayHaveWritten(ctx))) return undefined;
  const now = new Date();
  const decision = decide(order, job.action, await inputsAfterReading(ctx, job, order, thresholdRead), now);
  if (decision.type !== 'apply') return undefined;
  const outcome = await commit(ctx, job, order, decision, now);
  if (!outcome) ctx.orderCache.forget(order);
  return outcome;
}

/**
 * Whether an earlier attempt of this job may have written the order: a run again, or a job queued
 * under an Idempotency-Key (its retry may come at any time, and find nothing in Redis if Redis
 * lost the key's record and the job). Only for these is the ledger read. A first run of a job
 * without a key is new, but for one whose start Redis lost: run again within its request's
 * deadline, that is found among the order's newest applied jobs.
 */
function mayHaveWritten(ctx: JobContext): boolean {
  return ctx.runBefore || isKeyedJobId(ctx.jobId);
}

/**
 * What the decision needs besides the order, read after it: the threshold (its read started with
 * the job) and, for a customer's move, whether the order's session is closed (a session that is
 * gone counts as closed).
 */
async function inputsAfterReading(
  ctx: JobContext,
  job: OrderActionJob,
  order: OrderDoc,
  thresholdRead: Promise<number> | undefined,
): Promise<DecisionInputs> {
  const threshold = await thresholdRead;
  if (!needsSession(job.action)) return { threshold };
  const sessionId = order.sessionId ?? job.scope.sessionId;
  const sessionClosed = sessionId !== undefined && !(await ctx.sessions.isOpen(sessionId));
  return { threshold, sessionClosed };
}

/**
 * The version-guarded write of a decided change, then its announcement; undefined when the version
 * moved on. Never past the request's deadline: its client has been told 503, not that it applied.
 */
async function commit(
  ctx: JobContext,
  job: OrderActionJob,
  order: OrderDoc,
  decision: Apply,
  now: Date,
): Promise<JobOutcome | undefined> {
  if (job.deadline !== undefined && Date.now() > job.deadline) {
    ctx.log.warn(
      { orderNumber: order.number, lateMs: Date.now() - job.deadline },
      'request gave up waiting; not applied',
    );
    return notAppliedOutcome(ctx.jobId);
  }
  ctx.checkpoint('before-apply');
  // The transition's events are recorded by its write (the outbox): never one without the other.
  const updated = await ctx.writer.write(order, decision.change, ctx.jobId, now);
  if (!updated) return undefined;
  ctx.orderCache.set(updated);
  ctx.checkpoint('after-apply');
  ctx.log.info(
    {
      orderNumber: updated.number,
      from: order.state,
      to: updated.state,
      action: job.action.kind,
      version: updated.version,
    },
    'order transition applied',
  );
  await ctx.announcer.order(updated);
  await ctx.followUps.applied(order, updated, ctx.announcer);
  if (isPlacement(order, updated)) await ctx.followUps.placed(updated);
  return { status: 200, body: toOrderRecord(updated) };
}

/** A new placement: the order became PLACED, or was placed again (a recovery sets a new `orderTime`). */
function isPlacement(before: OrderDoc, after: OrderDoc): boolean {
  return (
    after.state === 'PLACED' &&
    (before.state !== 'PLACED' || before.orderTime?.getTime() !== after.orderTime?.getTime())
  );
}
