import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { JobOutcome } from '@pos/shared/queue/jobs';
import type { AppContext } from '../context';

const MAX_NUMBER = 2_147_483_647;

/** Path numbers (orders, commands) are positive integers; anything else is a 400 problem. */
export function numberParam(value: string | undefined, what: 'Order' | 'Command'): number {
  if (value === undefined || !/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > MAX_NUMBER) {
    throw new ProblemError(problems.illegalArgument(`${what} number must be a positive integer`));
  }
  return Number(value);
}

/** Answers with a worker's outcome as it is. */
export function sendOutcome(ctx: AppContext, outcome: JobOutcome): void {
  if ('problem' in outcome) throw new ProblemError(outcome.problem);
  ctx.status = outcome.status;
  if ('body' in outcome) ctx.body = outcome.body;
}
