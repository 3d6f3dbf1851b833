import Koa from 'koa';
import type Router from '@koa/router';
import type { AppState } from './context';
import type { ApiDeps } from './deps';
import { problemResponses } from './middleware/problems';
import { requestContext } from './middleware/request-context';
import { adminRoutes } from './routes/admin';
import { healthRoutes } from './routes/health';
import { serviceRoutes } from './routes/orders';

/** The Koa app: request context first, then problem rendering, then the routers. */
export function createApp(deps: ApiDeps, extraRouters: Router<AppState>[] = []): Koa<AppState> {
  const app = new Koa<AppState>();
  app.proxy = true;
  // Errors are rendered and logged by problemResponses; Koa's default printer would repeat them.
  app.silent = true;

  app.use(requestContext(deps.log));
  app.use(problemResponses());

  for (const router of [healthRoutes(deps), serviceRoutes(deps), adminRoutes(deps), ...extraRouters]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
