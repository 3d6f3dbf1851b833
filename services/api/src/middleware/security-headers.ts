import type { Next } from 'koa';
import type { AppContext } from '../context';

/**
 * Headers every answer carries, set before the handlers run (a handler may still set its own):
 * - `nosniff`: a browser takes each body as the type it is sent as;
 * - `no-store`: answers carry keys, tokens and order data, which no cache should keep;
 * - frame protection (old and new header), so that no page of the service can be framed by another site.
 */
export function securityHeaders() {
  return async function securityHeadersMiddleware(ctx: AppContext, next: Next): Promise<void> {
    ctx.set({
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      'X-Frame-Options': 'DENY',
      'Content-Security-Policy': "frame-ancestors 'none'",
    });
    await next();
  };
}
