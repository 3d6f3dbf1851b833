import type { SessionDoc, SessionType } from '../store/documents';

/** The interface's two 401 bodies, byte for byte (docs/register-interface.md, part 5 rules 4 and 5). */
export const SESSION_NOT_VALID_BODY = '{"error":"Session not valid"}';
export const UNAUTHORIZED_BODY = '{"message":"Unauthorized","uid":null}';

/** Until when a key opens its session, and what ends it then. */
export interface KeyLimit {
  at: Date;
  /** `key-retired`: a rotation replaced the key; `session-expired`: the session itself expires. */
  cause: 'key-retired' | 'session-expired';
}

/**
 * The interface's two 401s: `invalid` when the key matches no active session (text/plain body),
 * `unauthorized` when the session is recognised but expired or of the wrong type (JSON body).
 * An accepted key comes with its limit, when it has one.
 */
export type SessionVerdict =
  { ok: true; session: SessionDoc; limit?: KeyLimit } | { ok: false; reason: 'invalid' | 'unauthorized' };

/**
 * Which key hashes open a session, until when: the current key's for as long as the session
 * lives; the key its last rotation replaced until `previousKeyExpiresAt`; no other. Undefined
 * for a hash that is not the session's (or no longer is).
 */
export function keyLimitOf(session: SessionDoc, keyHash: string, now: Date): { limit?: KeyLimit } | undefined {
  const sessionLimit: KeyLimit | undefined = session.expiresAt && { at: session.expiresAt, cause: 'session-expired' };
  if (keyHash === session.keyHash) return { limit: sessionLimit };
  if (keyHash !== session.previousKeyHash || !session.previousKeyExpiresAt) return undefined;
  if (session.previousKeyExpiresAt.getTime() <= now.getTime()) return undefined;
  const retires: KeyLimit = { at: session.previousKeyExpiresAt, cause: 'key-retired' };
  return { limit: sessionLimit && sessionLimit.at.getTime() <= retires.at.getTime() ? sessionLimit : retires };
}

/**
 * Judges the session found for a key's hash. A key past its rotation grace answers exactly as a
 * revoked key does (`invalid`), whatever else is true of its session.
 */
export function judgeSession(
  session: SessionDoc | null,
  keyHash: string,
  expected: SessionType,
  now: Date,
): SessionVerdict {
  if (!session || session.closedAt) return { ok: false, reason: 'invalid' };
  const key = keyLimitOf(session, keyHash, now);
  if (!key) return { ok: false, reason: 'invalid' };
  if (session.type !== expected) return { ok: false, reason: 'unauthorized' };
  if (isExpired(session, now)) return { ok: false, reason: 'unauthorized' };
  return key.limit ? { ok: true, session, limit: key.limit } : { ok: true, session };
}

export function isExpired(session: SessionDoc, now: Date): boolean {
  return session.expiresAt !== undefined && session.expiresAt.getTime() <= now.getTime();
}
