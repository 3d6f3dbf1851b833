import type { SessionDoc, SessionType } from '../store/sessions';

/**
 * The interface's two 401s: `invalid` when the key matches no active session (text/plain body),
 * `unauthorized` when the session is recognised but expired or of the wrong type (JSON body).
 */
export type SessionVerdict = { ok: true; session: SessionDoc } | { ok: false; reason: 'invalid' | 'unauthorized' };

export function judgeSession(session: SessionDoc | null, expected: SessionType, now: Date): SessionVerdict {
  if (!session || session.closedAt) return { ok: false, reason: 'invalid' };
  if (session.type !== expected) return { ok: false, reason: 'unauthorized' };
  if (isExpired(session, now)) return { ok: false, reason: 'unauthorized' };
  return { ok: true, session };
}

export function isExpired(session: SessionDoc, now: Date): boolean {
  return session.expiresAt !== undefined && session.expiresAt.getTime() <= now.getTime();
}
