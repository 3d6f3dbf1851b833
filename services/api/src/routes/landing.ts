import type Router from '@koa/router';
import type { AppContext, AppState } from '../context';
import { createRouter } from './router';
import type { ApiDeps } from '../deps';
import { landingPage } from '../docs/pages';
import type { ServiceInfo } from '../service-info';
import { BULL_BOARD_PATH } from './bull-board';

/** `/`: the service's name and version, and where to go from here. Public: it shows nothing secret. */
export function landingRoutes(deps: Pick<ApiDeps, 'config'>, info: ServiceInfo): Router<AppState> {
  const router = createRouter();
  const page = landingPage(info, [
    { href: '/docs', text: 'API documentation', note: 'the OpenAPI document, rendered' },
    { href: `${deps.config.http.basePath}/openapi.json`, text: 'OpenAPI document', note: 'OpenAPI 3.1, JSON' },
    { href: BULL_BOARD_PATH, text: 'Bull Board', note: 'the work queue; asks for the admin token as the password' },
    { href: '/metrics', text: 'Metrics', note: 'Prometheus text' },
    { href: '/healthz', text: 'Liveness', note: 'the process answers' },
    { href: '/readyz', text: 'Readiness', note: 'MongoDB and Redis answer' },
  ]);
  router.get('/', (ctx: AppContext) => {
    ctx.type = 'text/html';
    ctx.body = page;
  });
  return router;
}
