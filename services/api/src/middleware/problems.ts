import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import { Problem, ProblemError, problemBody, problems } from '@pos/shared/domain/problem';
import { storeProblem } from '@pos/shared/store/store-errors';
import type { AppContext } from '../context';

export const PROBLEM_TYPE = 'application/problem+json';

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
      sendProblem(ctx, storeProblem(err, errorId) ?? problems.internal(errorId));
    }
  };
}
