/**
 * The transition queue's contract between API and worker: queue and job names, payloads and outcomes.
 */
import type { JobsOptions } from 'bullmq';
import type { OrderAction } from '../domain/order-state';
import { type Problem, problems } from '../domain/problem';
import type { OrderScope } from '../store/orders';

export const TRANSITION_QUEUE = 'order-work';

export const JOB = {
  orderAction: 'order-action',
  sessionClose: 'session-close',
} as const;

interface JobBase {
  /** The API node's reply channel; absent when nobody waits for the outcome. */
  replyTo?: string;
  /** The request that asked for the job, carried into the worker's log lines. */
  requestId?: string;
  /**
   * Epoch ms at which the waiting request gives up with a 503. A worker starts no job within
   * DEADLINE_MARGIN_MS of it, and no order write after it: a request told 503 is not applied
   * later behind its back, unless the job had started.
   */
  deadline?: number;
}

export interface OrderActionJob extends JobBase {
  scope: OrderScope;
  orderNumber: number;
  action: OrderAction;
}

export interface SessionCloseJob extends JobBase {
  sessionId: string;
}

/** Each job's data, by the job's name. */
export interface JobDataByName {
  [JOB.orderAction]: OrderActionJob;
  [JOB.sessionClose]: SessionCloseJob;
}

export type JobName = keyof JobDataByName;

/** The data of the job named `N`. */
export type JobDataOf<N extends JobName> = JobDataByName[N];

/** A job as it is added: its name, and the data of that name. */
export type JobPayload = { [N in JobName]: { name: N; data: JobDataOf<N> } }[JobName];

/** The one builder of an order transition's job. */
export function orderActionJob(scope: OrderScope, orderNumber: number, action: OrderAction): JobPayload {
  return { name: JOB.orderAction, data: { scope, orderNumber, action } };
}

/** The one builder of a session close's job. */
export function sessionCloseJob(sessionId: string): JobPayload {
  return { name: JOB.sessionClose, data: { sessionId } };
}

/**
 * What the worker decided; the API answers with it as it is. `notApplied`: the worker took the
 * job too late for its request and did nothing of it (counted `expired`, never kept as an answer),
 * so that a retry under the same Idempotency-Key runs it afresh.
 */
export type JobOutcome =
  { status: 200; body: unknown } | { status: 204 } | { status: number; problem: Problem; notApplied?: true };

/** Whether the worker did nothing of the job, its request's deadline being too near or past. */
export const isNotApplied = (outcome: JobOutcome | undefined): boolean =>
  outcome !== undefined && 'notApplied' in outcome && outcome.notApplied === true;

/** The job id of a request with an Idempotency-Key: the same for every retry of it. */
export const keyedJobId = (idempotencyId: string): string => `idem-${idempotencyId}`;
/** Whether a job was queued under an Idempotency-Key. */
export const isKeyedJobId = (jobId: string): boolean => jobId.startsWith(keyedJobId(''));

/** The outcome of a job a worker took too late for its request, and did not apply. */
export function notAppliedOutcome(jobId: string): JobOutcome {
  return { status: 503, problem: problems.notApplied(isKeyedJobId(jobId)), notApplied: true };
}

/**
 * A worker starts no job (a first run) with less than this left before its request's deadline: it
 * would be answered after the request gave up (wasted work, and an unknown outcome), and it leaves
 * room for clocks that differ by less. A job not started by its deadline is therefore not applied.
 */
export const DEADLINE_MARGIN_MS = 250;

export interface JobReply {
  jobId: string;
  outcome: JobOutcome;
}

/**
 * Retries cover MongoDB blips; each retry re-reads, and applied job ids make re-runs harmless.
 * Finished jobs are kept for Bull Board and for a keyed retry's look-up, bounded by age and by
 * count: a long MongoDB outage fails every job sent meanwhile, and Redis runs `noeviction`, so
 * failed jobs kept by age alone could fill it and stop the queue for everyone. `keepFailed` is
 * JOB_KEEP_FAILED (per partition; the newest are kept).
 */
export function transitionJobOptions(keepFailed: number): JobsOptions {
  return {
    attempts: 5,
    backoff: { type: 'exponential', delay: 200 },
    removeOnComplete: { age: 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: keepFailed },
  };
}

export const replyChannel = (prefix: string, nodeId: string): string => `${prefix}:reply:${nodeId}`;

/** A job's replyTo names a reply channel of this deployment: a worker publishes its outcome nowhere else. */
export const isReplyChannel = (prefix: string, channel: unknown): channel is string =>
  typeof channel === 'string' && channel.startsWith(`${prefix}:reply:`);
