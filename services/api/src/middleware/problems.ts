import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import { Problem, ProblemError, problemBody, problems } from '@pos/shared/domain/problem';
import { storeProblem } from '@pos/shared/store/store-errors';
import type { AppContext } from '../context';

export const PROBLEM_TYPE = 'application/problem+json';

/** A request of these methods changes nothing: its 503 only says to retry. */
export const isSafeMethod = (method: string): boolean => method === 'GET' || method === 'HEAD' || method === 'OPTIONS';

export function sendProblem(ctx: AppContext, problem: Problem, headers: Record<string, string> = {}): void {
  ctx.status = problem.status;
  ctx.set(headers);
  if (problem.status === 503 && !ctx.response.get('Retry-After')) ctx.set('Retry-After', '1');
  ctx.type = PROBLEM_TYPE;
  // `instance` is the path only: the query string may carry an api_key.
  ctx.body = problemBody(problem, ctx.path);
}

/** Every error becomes a problem body; an unexpected one is a 500 whose id is also logged. */
export function problemResponses() {
  return async function problemMiddleware(ctx: AppContext, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        sendProblem(ctx, problems.notFound(`No route for ${ctx.method} ${ctx.path}`));
      } else if (ctx.status === 405 && ctx.body === undefined) {
        sendProblem(ctx, problems.methodNotAllowed(ctx.method, ctx.path));
      }
    } catch (err) {
      if (err instanceof ProblemError) {
        sendProblem(ctx, err.problem, err.headers);
        return;
      }
      const errorId = randomUUID();
      ctx.state.log.error({ err, errorId }, 'unexpected error');
      const problem = storeProblem(err, errorId) ?? problems.internal(errorId);
      // A write that MongoDB or Redis did not answer may still be applied when it wakes.
      sendProblem(
        ctx,
        problem.status === 503 && !isSafeMethod(ctx.method) ? problems.storeWriteUnknown(problem.detail) : problem,
      );
    }
  };
}
