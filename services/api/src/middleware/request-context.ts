import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { Logger } from '@pos/shared/log';
import { redactUrl } from '@pos/shared/log';
import type { AppContext } from '../context';

const INCOMING_ID = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when sane) and a child logger carrying it,
 * and writes one access line per request. URLs are logged with any api_key value redacted.
 */
export function requestContext(log: Logger) {
  return async function requestContextMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const incoming = ctx.get('x-request-id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = log.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      // ip: the peer, or with TRUST_PROXY the address the proxy in front reports
      const line = { method: ctx.method, url: redactUrl(ctx.originalUrl), status: ctx.status, ms: 0, ip: ctx.ip };
      const lineLog = ctx.state.log;
      const write = () => {
        line.ms = Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10;
        if (line.status >= 500) lineLog.error(line, 'request');
        else lineLog.info(line, 'request');
      };
      if (ctx.state.ending) void ctx.state.ending.then(write, write);
      else write();
    }
  };
}
