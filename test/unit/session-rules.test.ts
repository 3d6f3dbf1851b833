import { judgeSession, keyLimitOf } from '@pos/shared/auth/session-rules';
import type { SessionDoc } from '@pos/shared/store/sessions';

const now = new Date('2026-11-21T08:00:00.000Z');
const later = (ms: number) => new Date(now.getTime() + ms);

const session: SessionDoc = {
  _id: 's1',
  type: 'SERVICE',
  locationId: 'l1',
  keyHash: 'current',
  createdAt: new Date(0),
};
const rotated: SessionDoc = {
  ...session,
  previousKeyHash: 'previous',
  previousKeyExpiresAt: later(60_000),
  keyRotatedAt: now,
};

describe('session rules: which key hash opens a session, until when', () => {
  it('the current key, for as long as the session lives', () => {
    expect(judgeSession(session, 'current', 'SERVICE', now)).toEqual({ ok: true, session });
    const expiring = { ...session, expiresAt: later(5_000) };
    expect(judgeSession(expiring, 'current', 'SERVICE', now)).toEqual({
      ok: true,
      session: expiring,
      limit: { at: later(5_000), cause: 'session-expired' },
    });
  });

  it('the key a rotation replaced, until its grace ends; then it is a revoked key (invalid)', () => {
    expect(judgeSession(rotated, 'previous', 'SERVICE', now)).toEqual({
      ok: true,
      session: rotated,
      limit: { at: later(60_000), cause: 'key-retired' },
    });
    expect(judgeSession(rotated, 'previous', 'SERVICE', later(60_000))).toEqual({ ok: false, reason: 'invalid' });
    expect(judgeSession(rotated, 'current', 'SERVICE', later(60_000))).toEqual({ ok: true, session: rotated });
  });

  it('the earlier of the session expiry and the grace limits the previous key', () => {
    expect(keyLimitOf({ ...rotated, expiresAt: later(1_000) }, 'previous', now)).toEqual({
      limit: { at: later(1_000), cause: 'session-expired' },
    });
    expect(keyLimitOf({ ...rotated, expiresAt: later(120_000) }, 'previous', now)).toEqual({
      limit: { at: later(60_000), cause: 'key-retired' },
    });
  });

  it('no other hash: a retired or foreign key is invalid even on a session of the wrong type or expired', () => {
    expect(judgeSession(rotated, 'other', 'SERVICE', now)).toEqual({ ok: false, reason: 'invalid' });
    expect(judgeSession({ ...rotated, type: 'CUSTOMER' }, 'previous', 'SERVICE', later(60_000))).toEqual({
      ok: false,
      reason: 'invalid',
    });
    expect(judgeSession({ ...rotated, type: 'CUSTOMER' }, 'previous', 'SERVICE', now)).toEqual({
      ok: false,
      reason: 'unauthorized',
    });
    expect(judgeSession({ ...session, expiresAt: now }, 'current', 'SERVICE', now)).toEqual({
      ok: false,
      reason: 'unauthorized',
    });
  });

  it('a closed session opens with no key', () => {
    expect(judgeSession({ ...rotated, closedAt: now }, 'current', 'SERVICE', now)).toEqual({
      ok: false,
      reason: 'invalid',
    });
    expect(judgeSession(null, 'current', 'SERVICE', now)).toEqual({ ok: false, reason: 'invalid' });
  });
});
