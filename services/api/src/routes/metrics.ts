import type Router from '@koa/router';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { createRouter } from './router';

/**
 * GET /metrics, Prometheus text. Unauthenticated like /healthz: it carries no keys, ids or
 * order data, and deployments keep it (with /admin) off the public edge.
 */
export function metricsRoutes(deps: Pick<ApiDeps, 'metrics'>): Router<AppState> {
  const router = createRouter();
  router.get('/metrics', async (ctx: AppContext) => {
    const { registry } = deps.metrics;
    ctx.body = await registry.metrics();
    ctx.set('Content-Type', registry.contentType);
  });
  return router;
}
