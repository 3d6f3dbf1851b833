/**
 * A location's presence as the admin API and the sweep read it (presenceOf), from a hash and the
 * nodes' heartbeats: no Redis.
 */
import { fieldsOf, heartbeatsNeeded, presenceOf } from '@pos/shared/presence/presence-store';

const WINDOW_MS = 60_000;
const NOW = Date.parse('2026-12-07T12:00:00Z');
const SINCE = NOW - WINDOW_MS;
const sighting = (lastSeenAt: number, streams = 0, deviceId = 'till') =>
  JSON.stringify({ d: deviceId, l: lastSeenAt, s: streams });

describe('presenceOf', () => {
  it('counts a session seen within the window, and removes a field older than it', () => {
    const hash = fieldsOf({ 's1/n1': sighting(NOW - 1_000), 's2/n1': sighting(NOW - WINDOW_MS - 1) });
    const { presence, stale } = presenceOf(hash, new Map(), SINCE);
    expect(presence).toEqual({
      online: true,
      registers: [{ sessionId: 's1', deviceId: 'till', lastSeenAt: new Date(NOW - 1_000).toISOString(), streams: 0 }],
    });
    expect(stale).toEqual(['s2/n1']);
  });

  it("counts a stream's field past the window at its node's heartbeat, and only while that is within it", () => {
    const hash = fieldsOf({ 's1/n1': sighting(NOW - 10 * WINDOW_MS, 2) });
    expect(heartbeatsNeeded(hash, SINCE)).toEqual(['n1']);
    const fresh = presenceOf(hash, new Map([['n1', NOW - 5_000]]), SINCE);
    expect(fresh.presence.registers).toEqual([
      { sessionId: 's1', deviceId: 'till', lastSeenAt: new Date(NOW - 5_000).toISOString(), streams: 2 },
    ]);
    expect(fresh.stale).toEqual([]);
    const gone = presenceOf(hash, new Map([['n1', NOW - WINDOW_MS - 1]]), SINCE);
    expect(gone.presence).toEqual({ online: false, registers: [] });
    expect(gone.stale).toEqual(['s1/n1']);
  });

  it('does not extend a field without streams by its node heartbeat', () => {
    const hash = fieldsOf({ 's1/n1': sighting(NOW - 2 * WINDOW_MS, 0) });
    expect(heartbeatsNeeded(hash, SINCE)).toEqual([]);
    expect(presenceOf(hash, new Map([['n1', NOW]]), SINCE).presence.online).toBe(false);
  });

  it("merges one session's nodes: streams summed, seen at the latest; sessions sorted by id", () => {
    const hash = fieldsOf({
      'sB/n1': sighting(NOW - 3_000, 1),
      'sA/n1': sighting(NOW - 9_000, 1),
      'sA/n2': sighting(NOW - 2_000, 3),
    });
    const { registers } = presenceOf(hash, new Map(), SINCE).presence;
    expect(registers.map((r) => [r.sessionId, r.streams, r.lastSeenAt])).toEqual([
      ['sA', 4, new Date(NOW - 2_000).toISOString()],
      ['sB', 1, new Date(NOW - 3_000).toISOString()],
    ]);
  });

  it('removes fields it cannot read (an older shape, or damaged), and a session id with a slash keeps it', () => {
    const hash = fieldsOf({ 'old/n1': '1700000000000', 'bad/n1': '{', 'a/b/n1': sighting(NOW) });
    const { presence, stale } = presenceOf(hash, new Map(), SINCE);
    expect(stale.sort()).toEqual(['bad/n1', 'old/n1']);
    expect(presence.registers.map((r) => r.sessionId)).toEqual(['a/b']);
  });
});
