import Koa, { type Middleware } from 'koa';
import Router from '@koa/router';
import { tracing } from '@pos/shared/telemetry/tracing';
import type { AppState } from './context';
import type { ApiDeps } from './deps';
import { requestMetrics } from './metrics/request-metrics';
import { problemResponses } from './middleware/problems';
import { requestContext } from './middleware/request-context';
import { requestDeadline } from './middleware/request-deadline';
import { securityHeaders } from './middleware/security-headers';
import { traceRequests } from './middleware/trace-requests';
import {
  ADMIN_MENU_OPERATIONS,
  BOARD_OPERATIONS,
  CUSTOMER_OPERATIONS,
  DOCUMENTATION_OPERATIONS,
  HEALTH_OPERATIONS,
  LOCATION_OPERATIONS,
  LOCATION_WORK_OPERATIONS,
  MENU_OPERATIONS,
  MONITORING_OPERATIONS,
  OPERATOR_OPERATIONS,
  REGISTER_OPERATIONS,
  SESSION_OPERATIONS,
  WEBHOOK_OPERATIONS,
  EVENT_OPERATIONS,
} from '@pos/shared/openapi/operations';
import { boardHandlers } from './routes/board';
import { bullBoard } from './routes/bull-board';
import { customerHandlers } from './routes/customer';
import { documentationHandlers } from './routes/documentation';
import { healthHandlers } from './routes/health';
import { locationWorkHandlers } from './routes/location-work';
import { locationHandlers } from './routes/locations';
import { adminMenuHandlers, menuHandlers } from './routes/menus';
import { routesOf } from './routes/mount';
import { monitoringHandlers } from './routes/monitoring';
import { operatorHandlers } from './routes/operators';
import { requestPipeline } from './routes/pipeline';
import { registerHandlers } from './routes/register';
import { sessionHandlers } from './routes/sessions';
import { webhookHandlers } from './routes/webhooks';
import { eventHandlers } from './routes/events';
import { readServiceInfo } from './service-info';

/** What a listener serves: routers (made by `createRouter`) and whole mounted apps (Bull Board). */
export type Mount = Router<AppState> | Middleware<AppState>;

/** Each part of the operation table, as the routes of a listener; every route of the service is one of these. */
function surfaces(deps: ApiDeps) {
  const pipeline = requestPipeline(deps);
  const { basePath } = deps.config.http;
  const info = readServiceInfo();
  return {
    /**
     * What every listener serves: health probes, the landing page (linking what the listener
     * serves: `operator`), the API's documents and the location board (whose operator mode calls
     * the admin API, so operators open it on ADMIN_PORT).
     */
    everywhere: (operator: boolean) => [
      routesOf(pipeline, basePath, HEALTH_OPERATIONS, healthHandlers(deps)),
      routesOf(pipeline, basePath, DOCUMENTATION_OPERATIONS, documentationHandlers(deps, info, { operator })),
      routesOf(pipeline, basePath, BOARD_OPERATIONS, boardHandlers(deps)),
    ],
    /** The register-facing door (`PORT`): what registers and customer apps call. */
    public: [
      routesOf(pipeline, basePath, REGISTER_OPERATIONS, registerHandlers(deps)),
      routesOf(pipeline, basePath, CUSTOMER_OPERATIONS, customerHandlers(deps)),
      routesOf(pipeline, basePath, MENU_OPERATIONS, menuHandlers(deps)),
    ],
    /** The operator surfaces: on `ADMIN_PORT` when it is set, never then on `PORT`. */
    operator: [
      routesOf(pipeline, basePath, LOCATION_OPERATIONS, locationHandlers(deps)),
      routesOf(pipeline, basePath, ADMIN_MENU_OPERATIONS, adminMenuHandlers(deps)),
      routesOf(pipeline, basePath, SESSION_OPERATIONS, sessionHandlers(deps)),
      routesOf(pipeline, basePath, LOCATION_WORK_OPERATIONS, locationWorkHandlers(deps)),
      routesOf(pipeline, basePath, OPERATOR_OPERATIONS, operatorHandlers(deps)),
      routesOf(pipeline, basePath, WEBHOOK_OPERATIONS, webhookHandlers(deps)),
      routesOf(pipeline, basePath, EVENT_OPERATIONS, eventHandlers(deps)),
      routesOf(pipeline, basePath, MONITORING_OPERATIONS, monitoringHandlers(deps)),
      bullBoard(deps),
    ] as Mount[],
  };
}

/** The Koa app of each listener: `public` on PORT, and `operator` on ADMIN_PORT when it is set. */
export interface ApiApps {
  public: Koa<AppState>;
  operator?: Koa<AppState>;
}

/**
 * With `ADMIN_PORT` the two surfaces are two apps on two listeners: the public one has no
 * operator route at all, however a path is spelled. Without it (the embedded default) one
 * app serves both. Health probes answer on every listener.
 */
export function createApps(deps: ApiDeps): ApiApps {
  const routes = surfaces(deps);
  if (deps.config.http.adminPort === undefined)
    return { public: createApp(deps, [...routes.everywhere(true), ...routes.public, ...routes.operator]) };
  return {
    public: createApp(deps, [...routes.everywhere(false), ...routes.public]),
    operator: createApp(deps, [...routes.everywhere(true), ...routes.operator]),
  };
}

/**
 * One listener's app: request context, metrics, headers, the request's deadline, problem rendering, then the mounts.
 */
export function createApp(deps: ApiDeps, mounts: Mount[]): Koa<AppState> {
  const app = new Koa<AppState>();
  // X-Forwarded-* only from a proxy the operator vouches for; then only its own (last) hop.
  app.proxy = deps.config.http.trustProxy;
  app.maxIpsCount = 1;
  // Errors are rendered and logged by problemResponses; Koa's default printer would repeat them.
  app.silent = true;

  const traces = tracing();
  if (traces) app.use(traceRequests(traces));
  app.use(requestContext(deps.log));
  app.use(requestMetrics(deps.metrics));
  app.use(securityHeaders());
  // Inside the headers (it writes its own when it answers), outside the problem renderer (whose answers it races).
  app.use(requestDeadline(deps.config.queue.jobTimeoutMs));
  app.use(problemResponses());

  for (const mount of mounts) {
    if (mount instanceof Router) {
      if (!mount.opts.sensitive)
        throw new Error(`router ${mount.opts.prefix ?? '/'} must be case-sensitive (use createRouter)`);
      app.use(mount.routes());
      app.use(mount.allowedMethods());
    } else app.use(mount);
  }
  return app;
}
