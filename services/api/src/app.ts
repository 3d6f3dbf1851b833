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
import { adminRoutes } from './routes/admin';
import { webhookRoutes } from './routes/webhooks';
import { boardRoutes } from './routes/board';
import { bullBoard } from './routes/bull-board';
import { customerRoutes } from './routes/customer';
import { docsRoutes } from './routes/docs';
import { healthRoutes } from './routes/health';
import { landingRoutes } from './routes/landing';
import { metricsRoutes } from './routes/metrics';
import { operatorRoutes } from './routes/operators';
import { serviceRoutes } from './routes/orders';
import { streamRoutes } from './routes/stream';
import { readServiceInfo } from './service-info';

/** What a listener serves: routers (made by `createRouter`) and whole mounted apps (Bull Board). */
export type Mount = Router<AppState> | Middleware<AppState>;

/**
 * What every listener serves: health probes, the landing page, the API's documents and the
 * location board (whose operator mode calls the admin API, so operators open it on ADMIN_PORT).
 */
function everywhere(deps: ApiDeps): Mount[] {
  const info = readServiceInfo();
  return [healthRoutes(deps), landingRoutes(deps, info), docsRoutes(deps, info), boardRoutes(deps)];
}

/** The register-facing door (`PORT`): what registers and customer apps call. */
function publicSurface(deps: ApiDeps): Mount[] {
  return [serviceRoutes(deps), streamRoutes(deps), customerRoutes(deps)];
}

/** The operator surfaces: on `ADMIN_PORT` when it is set, never then on `PORT`. */
function operatorSurface(deps: ApiDeps): Mount[] {
  return [adminRoutes(deps), operatorRoutes(deps), webhookRoutes(deps), metricsRoutes(deps), bullBoard(deps)];
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
  if (deps.config.http.adminPort === undefined) return { public: createApp(deps, [...publicSurface(deps), ...operatorSurface(deps)]) };
  return { public: createApp(deps, publicSurface(deps)), operator: createApp(deps, operatorSurface(deps)) };
}

/** One listener's app: request context, metrics, headers, the request's deadline, problem rendering, then the mounts. */
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

  for (const mount of [...everywhere(deps), ...mounts]) {
    if (mount instanceof Router) {
      if (!mount.opts.sensitive) throw new Error(`router ${mount.opts.prefix ?? '/'} must be case-sensitive (use createRouter)`);
      app.use(mount.routes());
      app.use(mount.allowedMethods());
    } else app.use(mount);
  }
  return app;
}
