import type Router from '@koa/router';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { checkReadiness } from '../health/readiness';
import { createRouter } from './router';

/**
 * Liveness (the process answers) and readiness (see checkReadiness). A cluster master that died
 * is unready from its loss until its replica is promoted and the subscriptions have moved.
 */
export function healthRoutes(deps: ApiDeps): Router<AppState> {
  const router = createRouter();

  router.get('/healthz', (ctx: AppContext) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx: AppContext) => {
    if (!deps.isAccepting()) throw new ProblemError(problems.unavailable('Shutting down'));
    const { ready, mongo, redis } = await checkReadiness(deps);
    if (!ready) throw new ProblemError(problems.unavailable(`MongoDB ${mongo}, Redis ${redis}`));
    ctx.body = { status: 'ready', mongo, redis };
  });

  return router;
}
