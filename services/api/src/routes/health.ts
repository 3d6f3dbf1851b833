import Router from '@koa/router';
import { ProblemError, problems } from '../../../../shared/src/domain/problem';
import { pingMongo } from '../../../../shared/src/store/mongo';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';

const PROBE_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer in ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Liveness (the process answers) and readiness (MongoDB and Redis answer, not shutting down). */
export function healthRoutes(deps: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/healthz', (ctx: AppContext) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx: AppContext) => {
    if (!deps.isAccepting()) throw new ProblemError(problems.unavailable('Shutting down'));
    const checks = await Promise.allSettled([
      withTimeout(pingMongo(deps.db), 'MongoDB'),
      withTimeout(deps.redis.ping(), 'Redis'),
    ]);
    const [mongo, redis] = checks.map((c) => (c.status === 'fulfilled' ? 'ok' : 'unreachable'));
    if (mongo !== 'ok' || redis !== 'ok') {
      throw new ProblemError(problems.unavailable(`MongoDB ${mongo}, Redis ${redis}`));
    }
    ctx.body = { status: 'ready', mongo, redis };
  });

  return router;
}
