import Router from '@koa/router';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';

/**
 * GET /metrics, Prometheus text. Unauthenticated like /healthz: it carries no keys, ids or
 * order data, and deployments keep it (with /admin) off the public edge.
 */
export function metricsRoutes(deps: Pick<ApiDeps, 'metrics'>): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/metrics', async (ctx: AppContext) => {
    const { registry } = deps.metrics;
    ctx.body = await registry.metrics();
    ctx.set('Content-Type', registry.contentType);
  });
  return router;
}
