import Koa from 'koa';
import type Router from '@koa/router';
import type { AppState } from './context';
import type { ApiDeps } from './deps';
import { requestMetrics } from './metrics/request-metrics';
import { problemResponses } from './middleware/problems';
import { requestContext } from './middleware/request-context';
import { adminRoutes } from './routes/admin';
import { boardRoutes } from './routes/board';
import { bullBoard } from './routes/bull-board';
import { customerRoutes } from './routes/customer';
import { healthRoutes } from './routes/health';
import { metricsRoutes } from './routes/metrics';
import { serviceRoutes } from './routes/orders';
import { streamRoutes } from './routes/stream';

/** The Koa app: request context first, then problem rendering, then the routers. */
export function createApp(deps: ApiDeps, extraRouters: Router<AppState>[] = []): Koa<AppState> {
  const app = new Koa<AppState>();
  app.proxy = true;
  // Errors are rendered and logged by problemResponses; Koa's default printer would repeat them.
  app.silent = true;

  app.use(requestContext(deps.log));
  app.use(requestMetrics(deps.metrics));
  app.use(problemResponses());

  for (const router of [healthRoutes(deps), metricsRoutes(deps), serviceRoutes(deps), streamRoutes(deps), customerRoutes(deps), adminRoutes(deps), boardRoutes(deps), ...extraRouters]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  app.use(bullBoard(deps));
  return app;
}
