import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { HEALTH_OPERATIONS } from '@pos/shared/openapi/operations';
import { buildInfo } from '@pos/shared/build-info';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { checkReadiness } from '../health/readiness';
import type { Handlers } from './mount';

/**
 * Liveness (the process answers) and readiness (see checkReadiness). A cluster master that died
 * is unready from its loss until its replica is promoted and the subscriptions have moved. A node
 * shedding load stays ready (docs/overload.md#the-node-protects-itself).
 */
export function healthHandlers(deps: ApiDeps): Handlers<typeof HEALTH_OPERATIONS> {
  return {
    liveness: (ctx: AppContext) => {
      ctx.body = { status: 'ok', ...buildInfo() };
    },

    readiness: async (ctx: AppContext) => {
      if (!deps.isAccepting()) throw new ProblemError(problems.unavailable('Shutting down'));
      const { ready, mongo, redis } = await checkReadiness(deps);
      if (!ready) throw new ProblemError(problems.unavailable(`MongoDB ${mongo}, Redis ${redis}`));
      ctx.body = { status: 'ready', mongo, redis };
    },
  };
}
