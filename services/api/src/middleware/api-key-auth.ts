import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Next } from 'koa';
import { hashApiKey } from '@pos/shared/auth/keys';
import { judgeSession, SESSION_NOT_VALID_BODY, UNAUTHORIZED_BODY } from '@pos/shared/auth/session-rules';
import type { SessionsRepo, SessionType } from '@pos/shared/store/sessions';
import type { AppContext } from '../context';

/** The header when present (even empty), else the query parameter. */
export function apiKeyOf(ctx: AppContext): string {
  const header = ctx.headers['api_key'];
  if (header !== undefined) return Array.isArray(header) ? (header[0] ?? '') : header;
  const query = ctx.query['api_key'];
  return (Array.isArray(query) ? query[0] : query) ?? '';
}

/** 500 to 1499 ms; awaited, so only this request waits. */
function rejectionDelay(): Promise<void> {
  return sleep(500 + randomInt(1000));
}

/**
 * Authenticates every request of a route group with an api_key of the given session type,
 * and puts the session on ctx.state.
 */
export function requireSession(sessions: SessionsRepo, type: SessionType) {
  return async function apiKeyAuth(ctx: AppContext, next: Next): Promise<void> {
    const key = apiKeyOf(ctx);
    const keyHash = key ? hashApiKey(key) : '';
    const session = key ? await sessions.findByKeyHash(keyHash) : null;
    const verdict = judgeSession(session, keyHash, type, new Date());
    if (!verdict.ok) {
      ctx.state.log.info({ reason: verdict.reason, sessionId: session?._id }, 'api key rejected');
      await rejectionDelay();
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
    ctx.state.log = ctx.state.log.child({ sessionId: verdict.session._id, locationId: verdict.session.locationId });
    await next();
  };
}
