/**
 * What runs each job of the queue contract: one handler per job name, each given the data its
 * name has (checked against the contract first: checkJob in @pos/shared/queue/job-schemas).
 */
import type { CheckedJob } from '@pos/shared/queue/job-schemas';
import { JOB, type JobDataOf, type JobName, type JobOutcome } from '@pos/shared/queue/jobs';
import type { JobContext } from './context';
import { applyOrderAction } from './order-action';
import { closeSession } from './session-close';

export type JobHandlers = { [N in JobName]: (ctx: JobContext, data: JobDataOf<N>) => Promise<JobOutcome> };

export const jobHandlers: JobHandlers = {
  [JOB.orderAction]: applyOrderAction,
  [JOB.sessionClose]: closeSession,
};

/** Runs a checked job with the handler of its name. */
export function runJob<N extends JobName>(
  ctx: JobContext,
  job: CheckedJob<N>,
  handlers: JobHandlers = jobHandlers,
): Promise<JobOutcome> {
  return handlers[job.name](ctx, job.data);
}
