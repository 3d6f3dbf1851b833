import type Router from '@koa/router';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { pingRedis } from '@pos/shared/redis';
import { pingMongo } from '@pos/shared/store/mongo';
import { withDeadline } from '@pos/shared/util/deadline';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { createRouter } from './router';

const PROBE_TIMEOUT_MS = 2_000;

/**
 * Liveness (the process answers) and readiness: MongoDB and Redis answer (on a cluster, every
 * master serving slots), the node's pub/sub subscriptions are all in place, and it is not
 * shutting down. A cluster master that died is unready from its loss until its replica is
 * promoted and the subscriptions have moved.
 */
export function healthRoutes(deps: ApiDeps): Router<AppState> {
  const router = createRouter();

  router.get('/healthz', (ctx: AppContext) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx: AppContext) => {
    if (!deps.isAccepting()) throw new ProblemError(problems.unavailable('Shutting down'));
    const checks = await Promise.allSettled([
      withDeadline(pingMongo(deps.db), PROBE_TIMEOUT_MS, 'MongoDB'),
      pingRedis(deps.redis, PROBE_TIMEOUT_MS),
    ]);
    const [mongo, reachable] = checks.map((c) => (c.status === 'fulfilled' ? 'ok' : 'unreachable'));
    const redis = reachable === 'ok' && !deps.subscriber.settled ? 'resubscribing' : reachable;
    if (mongo !== 'ok' || redis !== 'ok') {
      throw new ProblemError(problems.unavailable(`MongoDB ${mongo}, Redis ${redis}`));
    }
    ctx.body = { status: 'ready', mongo, redis };
  });

  return router;
}
