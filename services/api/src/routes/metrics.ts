import type Router from '@koa/router';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { allowRole, authenticateOperator } from '../middleware/admin-auth';
import { adminOperation, allowBound } from './admin-access';
import { createRouter } from './router';

/**
 * GET /metrics, Prometheus text, for admins not bound to locations (`Authorization: Bearer
 * <ADMIN_TOKEN>` or such an operator's token): it carries no keys or order data, but it tells how
 * busy every location is. The worker's METRICS_PORT stays open (an internal port).
 */
export function metricsRoutes(deps: Pick<ApiDeps, 'metrics' | 'adminToken' | 'operatorLookup'>): Router<AppState> {
  const router = createRouter();
  const spec = adminOperation('metrics');
  router.get('/metrics', authenticateOperator(deps), allowRole(spec.role), allowBound(spec), async (ctx: AppContext) => {
    const { registry } = deps.metrics;
    ctx.body = await registry.metrics();
    ctx.set('Content-Type', registry.contentType);
  });
  return router;
}
