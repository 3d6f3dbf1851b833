import type { Next } from 'koa';
import type { AppContext } from '../context';
import type { ShedReason } from '../overload/shed';
import type { ApiMetrics } from './api-metrics';

/** The route label of requests no router matched (404s, 405s, Bull Board's own paths). */
export const UNMATCHED_ROUTE = '(unmatched)';

type Metrics = Pick<ApiMetrics, 'httpRequests' | 'httpDuration' | 'requestsShed'>;

/**
 * Counts and times every request by the route pattern @koa/router matched, never the raw URL,
 * so that label values stay as few as the routes. Sits outside the problem renderer to see
 * the status that was sent.
 */
export function requestMetrics(metrics: Metrics) {
  return async function requestMetricsMiddleware(ctx: AppContext, next: Next): Promise<void> {
    // a start time rather than prom-client's timer: a stream would hold the timer's closure for its life
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      // a stream is recorded when it ends (see AppState.ending; an unnamed arrow, see ClientStream's onClose)
      if (ctx.state.ending) void ctx.state.ending.then(() => record(metrics, started, ctx));
      else record(metrics, started, ctx);
    }
  };
}

function record(metrics: Metrics, started: bigint, ctx: AppContext): void {
  const route = (ctx as AppContext & { _matchedRoute?: string | RegExp })._matchedRoute;
  countRequest(
    metrics,
    { method: ctx.method, route: typeof route === 'string' ? route : UNMATCHED_ROUTE, status: ctx.status },
    started,
    ctx.state.shed,
  );
}

/**
 * One request in the metrics, by its route's pattern: the app's (above) and
 * those refused in front of it (early-refusal.ts).
 */
export function countRequest(
  metrics: Metrics,
  request: { method: string; route: string; status: number },
  started: bigint,
  shed?: ShedReason,
): void {
  const labels = { method: request.method, route: request.route, status: String(request.status) };
  metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  metrics.httpRequests.inc(labels);
  if (shed) metrics.requestsShed.inc({ reason: shed, route: labels.route });
}
