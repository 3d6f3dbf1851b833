import type { Next } from 'koa';
import { problemBody, problems, type Problem } from '@pos/shared/domain/problem';
import type { AppContext } from '../context';
import { MAX_REJECTION_DELAY_MS } from './api-key-auth';
import { IDEMPOTENCY_KEY_HEADER } from './idempotency';
import { isSafeMethod, PROBLEM_TYPE } from './problems';
import { SECURITY_HEADERS } from './security-headers';

/** Past JOB_TIMEOUT, the room for a request's last steps (a job's last look, its idempotency record). */
export const ANSWER_MARGIN_MS = 1_000;

/** What is known of a request that was not answered in time: a read did nothing, a write may have. */
function lateProblem(ctx: AppContext): Problem {
  if (isSafeMethod(ctx.method)) return problems.unavailable('The request was not answered in time; retry it');
  return problems.outcomeUnknown(ctx.get(IDEMPOTENCY_KEY_HEADER) !== '');
}

/**
 * Gives every request its deadline, JOB_TIMEOUT from its arrival (`ctx.state.deadline`): the waits
 * on its path end by it (a job's, a stream's subscription), and each MongoDB operation and Redis
 * command is bounded on its own (MONGO_TIMEOUT, REDIS_COMMAND_TIMEOUT), so that its answer comes
 * by the deadline and a margin, whatever hangs.
 *
 * This is the backstop for a path that is still running then (calls that each kept within their
 * bound but not together): it answers 503 itself, written straight to the socket so that nothing
 * the handler sets afterwards reaches the client (Koa ignores a status or header set once the
 * head is sent), and lets the handler finish in the background; a keyed request's record is
 * kept or released by it then, as ever. A response already under way (an event stream that is
 * live) is never cut, and the 401s' own delay is never taken for a hang.
 */
export function requestDeadline(jobTimeoutMs: number) {
  const answerWithinMs = Math.max(jobTimeoutMs, MAX_REJECTION_DELAY_MS) + ANSWER_MARGIN_MS;
  return async function requestDeadlineMiddleware(ctx: AppContext, next: Next): Promise<void> {
    ctx.state.deadline = Date.now() + jobTimeoutMs;
    const work = next();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), answerWithinMs)));
    try {
      if ((await Promise.race([work, late])) !== 'late') return;
    } finally {
      clearTimeout(timer);
    }
    if (ctx.headerSent || ctx.respond === false) {
      await work;
      return;
    }
    const problem = lateProblem(ctx);
    const body = JSON.stringify(problemBody(problem, ctx.path));
    ctx.respond = false;
    ctx.res.writeHead(problem.status, {
      ...SECURITY_HEADERS,
      'Content-Type': PROBLEM_TYPE,
      'Content-Length': Buffer.byteLength(body),
      'Retry-After': '1',
      'X-Request-Id': ctx.state.requestId,
    });
    ctx.res.end(body);
    const { log } = ctx.state;
    log.warn(
      { method: ctx.method, afterMs: answerWithinMs },
      'request not answered in time: answered 503, its handler goes on',
    );
    work.then(
      () => log.info('request finished after its 503'),
      (err: unknown) => log.error({ err }, 'request failed after its 503'),
    );
  };
}
