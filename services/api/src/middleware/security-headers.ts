import type { Next } from 'koa';
import type { AppContext } from '../context';

/**
 * Headers every answer carries (unless its handler set its own):
 * - `nosniff`: a browser takes each body as the type it is sent as;
 * - `no-store`: answers carry keys, tokens and order data, which no cache should keep;
 * - frame protection (old and new header), so that no page of the service can be framed by another site.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "frame-ancestors 'none'",
});

/**
 * Sets SECURITY_HEADERS once the handlers have answered. Not before: a header set early is kept
 * in the response's own table for the response's life, and an event stream (which writes its
 * head itself, with these headers) lives for hours.
 */
export function securityHeaders() {
  return async function securityHeadersMiddleware(ctx: AppContext, next: Next): Promise<void> {
    await next();
    if (ctx.headerSent) return;
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
      if (!ctx.res.hasHeader(name)) ctx.set(name, value);
    }
  };
}
