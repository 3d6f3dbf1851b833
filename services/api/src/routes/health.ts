import type Router from '@koa/router';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { pingMongo } from '@pos/shared/store/mongo';
import { withDeadline } from '@pos/shared/util/deadline';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { createRouter } from './router';

const PROBE_TIMEOUT_MS = 2_000;

/** Liveness (the process answers) and readiness (MongoDB and Redis answer, not shutting down). */
export function healthRoutes(deps: ApiDeps): Router<AppState> {
  const router = createRouter();

  router.get('/healthz', (ctx: AppContext) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx: AppContext) => {
    if (!deps.isAccepting()) throw new ProblemError(problems.unavailable('Shutting down'));
    const checks = await Promise.allSettled([
      withDeadline(pingMongo(deps.db), PROBE_TIMEOUT_MS, 'MongoDB'),
      withDeadline(deps.redis.ping(), PROBE_TIMEOUT_MS, 'Redis'),
    ]);
    const [mongo, redis] = checks.map((c) => (c.status === 'fulfilled' ? 'ok' : 'unreachable'));
    if (mongo !== 'ok' || redis !== 'ok') {
      throw new ProblemError(problems.unavailable(`MongoDB ${mongo}, Redis ${redis}`));
    }
    ctx.body = { status: 'ready', mongo, redis };
  });

  return router;
}
