import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { Logger } from '@pos/shared/log';
import { redactUrl } from '@pos/shared/log';
import type { AppContext } from '../context';

const INCOMING_ID = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Gives every request an id of the service's own (the answer's X-Request-Id) and a child logger
 * carrying it, and writes one access line per request. The caller's X-Request-Id, when sane, is
 * kept beside it as a claim (`claimedRequestId`, on the log lines and in an audit record): a
 * caller cannot make its request pass for another's. URLs are logged with any api_key value redacted.
 */
export function requestContext(log: Logger) {
  return async function requestContextMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const incoming = ctx.get('x-request-id');
    const requestId = randomUUID();
    ctx.state.requestId = requestId;
    if (INCOMING_ID.test(incoming)) ctx.state.claimedRequestId = incoming;
    ctx.state.log = log.child(
      ctx.state.claimedRequestId === undefined ? { requestId } : { requestId, claimedRequestId: incoming },
    );
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      // set last, as the security headers are (see there); an event stream writes it with its head
      if (!ctx.headerSent) ctx.set('X-Request-Id', requestId);
      // ip: the peer, or with TRUST_PROXY the address the proxy in front reports (read now: a
      // stream's socket may be gone when its line is written)
      const ip = ctx.ip;
      // A stream's line waits for its end, holding only the context (which Koa holds until the
      // response ends anyway) in an unnamed arrow (see ClientStream's onClose).
      if (ctx.state.ending) void ctx.state.ending.then(() => writeAccessLine(ctx, started, ip));
      else writeAccessLine(ctx, started, ip);
    }
  };
}

function writeAccessLine(ctx: AppContext, started: bigint, ip: string): void {
  const ms = Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10;
  const line = { method: ctx.method, url: redactUrl(ctx.originalUrl), status: ctx.status, ms, ip };
  if (line.status >= 500) ctx.state.log.error(line, 'request');
  else ctx.state.log.info(line, 'request');
}
