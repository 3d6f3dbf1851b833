import { randomInt } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Next } from 'koa';
import { SESSION_NOT_VALID_BODY, UNAUTHORIZED_BODY } from '@pos/shared/auth/session-rules';
import { limitReached } from '@pos/shared/domain/problem';
import type { SessionDoc, SessionType } from '@pos/shared/store/documents';
import type { SessionLookup } from '../auth/session-lookup';
import { AppContext, queryOf } from '../context';

/** The header when present (even empty), else the query parameter. */
export function apiKeyOf(ctx: AppContext): string {
  const header = ctx.headers['api_key'];
  if (header !== undefined) return Array.isArray(header) ? (header[0] ?? '') : header;
  const query = queryOf(ctx)['api_key'];
  return (Array.isArray(query) ? query[0] : query) ?? '';
}

/** The interface's delay of a 401: 500 ms up to (not including) this. */
export const MAX_REJECTION_DELAY_MS = 1_500;

/**
 * 500 to 1499 ms; awaited, so only this request waits. It ends early when the client hangs
 * up: nothing would read the answer, and the timer would hold the request's memory meanwhile.
 */
async function rejectionDelay(res: ServerResponse): Promise<void> {
  if (res.destroyed || res.socket?.destroyed) return;
  const gone = new AbortController();
  const onClose = () => gone.abort();
  res.once('close', onClose);
  try {
    await sleep(500 + randomInt(MAX_REJECTION_DELAY_MS - 500), undefined, { signal: gone.signal });
  } catch {
    // the client is gone
  } finally {
    res.off('close', onClose);
  }
}

/**
 * Authenticates every request of a route group with an api_key of the given session type,
 * and puts the session on ctx.state. A rejection is one of the interface's two 401s after the
 * delay; while the node already delays API_KEY_MAX_REJECTIONS of them, a 429 at once instead.
 */
export function requireSession(lookup: SessionLookup, type: SessionType, onSighted?: (session: SessionDoc) => void) {
  return async function apiKeyAuth(ctx: AppContext, next: Next): Promise<void> {
    const { keyHash, session, form, verdict } = await lookup.authenticate(apiKeyOf(ctx), type, new Date());
    if (!verdict.ok) {
      // Out of the node's requests in flight for its delay: rejections have a budget of their own.
      ctx.state.releaseInFlight?.();
      const release = lookup.holdRejection();
      if (!release) {
        ctx.state.log.warn(
          { reason: verdict.reason, keyForm: form, ip: ctx.ip },
          'api key rejected at once: too many rejections in their delay',
        );
        throw limitReached('Too many requests with invalid keys are being answered; retry later', 1);
      }
      ctx.state.log.info(
        { reason: verdict.reason, keyForm: form, sessionId: session?._id, ip: ctx.ip },
        'api key rejected',
      );
      try {
        await rejectionDelay(ctx.res);
      } finally {
        release();
      }
      // Set even for a client that is gone (Koa writes nothing then): the access line shows the 401.
      ctx.status = 401;
      if (verdict.reason === 'invalid') {
        ctx.type = 'text/plain';
        ctx.body = SESSION_NOT_VALID_BODY;
      } else {
        ctx.type = 'application/json';
        ctx.body = UNAUTHORIZED_BODY;
      }
      return;
    }
    ctx.state.session = verdict.session;
    ctx.state.keyHash = keyHash;
    onSighted?.(verdict.session);
    // The request's own logger takes the bindings (no second child: an event stream keeps it for its life).
    ctx.state.log.setBindings({ sessionId: verdict.session._id, locationId: verdict.session.locationId });
    await next();
  };
}
