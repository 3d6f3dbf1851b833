import type { MONITORING_OPERATIONS } from '@pos/shared/openapi/operations';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import type { Handlers } from './mount';

/**
 * GET /metrics, Prometheus text, for admins not bound to locations (`Authorization: Bearer
 * <ADMIN_TOKEN>` or such an operator's token): it carries no keys or order data, but it tells how
 * busy every location is. The worker's METRICS_PORT stays open (an internal port). Bull Board, the
 * table's other operation here, is an app of its own (bull-board.ts).
 */
export function monitoringHandlers(deps: Pick<ApiDeps, 'metrics'>): Handlers<typeof MONITORING_OPERATIONS> {
  return {
    metrics: async (ctx: AppContext) => {
      const { registry } = deps.metrics;
      ctx.body = await registry.metrics();
      ctx.set('Content-Type', registry.contentType);
    },
  };
}
