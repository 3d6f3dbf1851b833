import type { Next } from 'koa';
import { STREAM_PATH, type Tracing } from '@pos/shared/telemetry/tracing';
import type { AppContext } from '../context';

/** A router path as the interface writes it: `/orders/:number/statusupdate` → `/orders/{number}/statusupdate`. */
export const routeTemplate = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function matchedRoute(ctx: AppContext): string | undefined {
  const route = (ctx as AppContext & { _matchedRoute?: string | RegExp })._matchedRoute;
  return typeof route === 'string' ? routeTemplate(route) : undefined;
}

/**
 * With tracing on (app.ts adds it only then): names each request's server span by the route
 * @koa/router matched, never the raw path; and gives an event stream, which the http
 * instrumentation leaves alone, a span for its opening (under the caller's `traceparent`) that
 * ends once the stream is open, not when it closes.
 */
export function traceRequests(tracing: Tracing) {
  return async function traceRequestsMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const name = () => {
      const route = matchedRoute(ctx);
      if (route) tracing.nameRoute(ctx.method, route);
    };
    if (!STREAM_PATH.test(ctx.path)) {
      try {
        await next();
      } finally {
        name();
      }
      return;
    }
    await tracing.serverSpan(
      ctx.req.headers,
      `${ctx.method} stream`,
      { 'http.request.method': ctx.method },
      async () => {
        try {
          await next();
        } finally {
          name();
          tracing.annotate({ 'http.response.status_code': ctx.status });
        }
      },
    );
  };
}
