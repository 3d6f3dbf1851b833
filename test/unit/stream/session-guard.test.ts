import { SessionGuard } from '@pos/api/stream/session-guard';
import type { EndReason } from '@pos/api/stream/end-reasons';
import type { SessionDoc } from '@pos/shared/store/documents';

const NOW = new Date('2026-11-25T10:00:00.000Z');
const at = (ms: number) => new Date(NOW.getTime() + ms);

function session(extra: Partial<SessionDoc> = {}): SessionDoc {
  return { _id: 's1', type: 'SERVICE', locationId: 'l1', keyHash: 'current', createdAt: NOW, ...extra };
}

describe("SessionGuard: a register stream's hold on its session", () => {
  let ended: EndReason[];
  const guard = (timesOutIn = 60_000) =>
    new SessionGuard('current', NOW.getTime() + timesOutIn, (reason) => ended.push(reason));

  beforeEach(() => {
    ended = [];
    jest.useFakeTimers({ now: NOW });
  });
  afterEach(() => jest.useRealTimers());

  it('ends the stream when its session expires, before the stream would time out', () => {
    guard().start(session({ expiresAt: at(5_000) }), NOW);
    jest.advanceTimersByTime(4_999);
    expect(ended).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(ended).toEqual(['session-expired']);
  });

  it('sets no timer for a limit past the stream timeout', () => {
    guard(1_000).start(session({ expiresAt: at(5_000) }), NOW);
    jest.advanceTimersByTime(10_000);
    expect(ended).toEqual([]);
  });

  it("a rotation that replaced the stream's key ends the stream when the key's grace ends", () => {
    const g = guard();
    g.start(session(), NOW);
    const rotated = session({ keyHash: 'new', previousKeyHash: 'current', previousKeyExpiresAt: at(2_000) });
    expect(g.holds(rotated, NOW)).toBe(true);
    jest.advanceTimersByTime(2_000);
    expect(ended).toEqual(['key-retired']);
  });

  it('the earlier of two limits wins; a later one read afterwards does not postpone it', () => {
    const g = guard();
    g.start(session({ expiresAt: at(3_000) }), NOW);
    expect(g.holds(session({ expiresAt: at(8_000) }), NOW)).toBe(true);
    jest.advanceTimersByTime(3_000);
    expect(ended).toEqual(['session-expired']);
  });

  it('a session read closed, gone, expired or no longer opened by the key ends the stream with its reason', () => {
    const cases: [SessionDoc | null, EndReason][] = [
      [session({ closedAt: NOW }), 'session-closed'],
      [null, 'session-closed'],
      [session({ expiresAt: at(-1) }), 'session-expired'],
      [session({ keyHash: 'other' }), 'key-retired'],
    ];
    for (const [current, reason] of cases) {
      ended = [];
      expect(guard().holds(current, NOW)).toBe(false);
      expect(ended).toEqual([reason]);
    }
  });

  it('stop clears the timer', () => {
    const g = guard();
    g.start(session({ expiresAt: at(1_000) }), NOW);
    g.stop();
    jest.advanceTimersByTime(5_000);
    expect(ended).toEqual([]);
  });
});
