import type { Next } from 'koa';
import type { AppContext } from '../context';
import type { ApiMetrics } from './api-metrics';

/** The route label of requests no router matched (404s, 405s, Bull Board's own paths). */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * Counts and times every request by the route pattern @koa/router matched, never the raw URL,
 * so that label values stay as few as the routes. Sits outside the problem renderer to see
 * the status that was sent.
 */
export function requestMetrics(metrics: Pick<ApiMetrics, 'httpRequests' | 'httpDuration'>) {
  return async function requestMetricsMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const stop = metrics.httpDuration.startTimer();
    try {
      await next();
    } finally {
      const route = (ctx as AppContext & { _matchedRoute?: string | RegExp })._matchedRoute;
      const labels = { method: ctx.method, route: typeof route === 'string' ? route : UNMATCHED_ROUTE, status: String(ctx.status) };
      const record = () => {
        stop(labels);
        metrics.httpRequests.inc(labels);
      };
      // a stream is recorded when it ends (see AppState.ending)
      if (ctx.state.ending) void ctx.state.ending.then(record, record);
      else record();
    }
  };
}
