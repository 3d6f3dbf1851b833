/**
 * The presence tracker (api/presence/presence-tracker.ts) and the presence it writes
 * (shared/presence/presence-store.ts) on a real Redis: what falls due together goes in one write,
 * each session as it stands when written; a stream's field counts past the window while its
 * node's heartbeat is fresh, and no longer once it is not.
 */
import Redis from 'ioredis';
import { PresenceTracker } from '@pos/api/presence/presence-tracker';
import { createLogger } from '@pos/shared/log';
import {
  pruneHeartbeats,
  readHeartbeats,
  readPresence,
  writeHeartbeat,
  writeSightings,
} from '@pos/shared/presence/presence-store';
import type { SessionDoc } from '@pos/shared/store/documents';
import { eventually } from '../support/wait';

const WINDOW_MS = 60_000;
const session = (id: string, locationId: string): SessionDoc => ({
  _id: id,
  type: 'SERVICE',
  locationId,
  keyHash: 'k',
  createdAt: new Date(),
  deviceId: `dev-${id}`,
});

describe('the presence tracker', () => {
  const prefix = `presence-tracker-${process.pid}`;
  let redis: Redis;
  let tracker: PresenceTracker;

  beforeAll(() => {
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  afterEach(() => tracker.stop());
  afterAll(async () => {
    await redis.quit();
  });

  it('writes the streams that open in one turn, over several locations, in one write with their latest counts', async () => {
    tracker = new PresenceTracker({
      redis,
      prefix,
      nodeId: 'node-1',
      windowMs: WINDOW_MS,
      log: createLogger('silent', 'test'),
    });
    // the commands on this test's keys, as Redis ran them
    const monitor = redis.duplicate({ monitor: true, lazyConnect: true });
    // The shared Redis's other traffic can arrive with MONITOR's own reply, before ioredis is in
    // monitoring mode, and still streams in as it disconnects: ioredis reports those lines as
    // errors, and they are other tests' commands, sent before this test's or after.
    // (`redis.monitor()` listens for one error only, and rejects.)
    monitor.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      monitor.once('monitoring', () => resolve());
      void monitor.connect();
    });
    const ran: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((arg) => arg.startsWith(prefix))) ran.push(args[0]!.toLowerCase());
    });
    const a1 = session('s-a1', 'loc-a');
    tracker.streamOpened(a1);
    tracker.streamOpened(a1);
    tracker.streamOpened(session('s-a2', 'loc-a'));
    tracker.streamOpened(session('s-b1', 'loc-b'));
    tracker.streamClosed('s-a1');
    // the write's last command, then one sent after it: nothing of the write comes later
    await new Promise<void>((resolve) =>
      monitor.on(
        'monitor',
        (_time: string, args: string[]) =>
          args[0]?.toLowerCase() === 'zadd' && args[1]?.startsWith(prefix) && resolve(),
      ),
    );
    const seenAll = new Promise<void>((resolve) =>
      monitor.on('monitor', (_time: string, args: string[]) => args[1] === `${prefix}:end` && resolve()),
    );
    await redis.get(`${prefix}:end`);
    await seenAll;
    monitor.disconnect();
    ran.pop();
    expect(ran.sort()).toEqual(['hset', 'hset', 'persist', 'persist', 'zadd']);

    const now = Date.now();
    const a = await readPresence(redis, prefix, 'loc-a', WINDOW_MS, now);
    expect(a.online).toBe(true);
    expect(Object.fromEntries(a.registers.map((register) => [register.deviceId, register.streams]))).toEqual({
      'dev-s-a1': 1,
      'dev-s-a2': 1,
    });
    expect(
      (await readPresence(redis, prefix, 'loc-b', WINDOW_MS, now)).registers.map((register) => register.streams),
    ).toEqual([1]);
  });

  it('writes what is due when it stops: the streams a shutdown ended count no more', async () => {
    tracker = new PresenceTracker({
      redis,
      prefix,
      nodeId: 'node-2',
      windowMs: WINDOW_MS,
      log: createLogger('silent', 'test'),
    });
    const held = session('s-c1', 'loc-c');
    const streams = async () =>
      (await readPresence(redis, prefix, 'loc-c', WINDOW_MS, Date.now())).registers.map((register) => register.streams);
    tracker.streamOpened(held);
    await eventually(async () => (await streams()).join() === '1', 'the open stream written');
    tracker.streamClosed(held._id);
    tracker.stop();
    await eventually(async () => (await streams()).join() === '0', 'its end written at the stop');
  });

  it("counts a stream's field past the window while its node's heartbeat is within it, at that heartbeat; then removes it", async () => {
    const t0 = Date.now() - 10 * WINDOW_MS;
    await redis.hset(`${prefix}:presence:loc:loc-d`, 'old/node-0', '{}');
    await redis.pexpire(`${prefix}:presence:loc:loc-d`, 60_000); // as a version before the heartbeat left it
    await writeSightings(
      redis,
      prefix,
      'node-3',
      new Map([
        [
          'loc-d',
          [
            { sessionId: 's-d1', deviceId: 'dev-d1', lastSeenAt: t0, streams: 1 },
            { sessionId: 's-d2', deviceId: 'dev-d2', lastSeenAt: t0, streams: 0 },
          ],
        ],
      ]),
    );
    expect(await redis.pttl(`${prefix}:presence:loc:loc-d`)).toBe(-1); // the expiry gone with the write
    const beat = t0 + 5 * WINDOW_MS;
    await writeHeartbeat(redis, prefix, 'node-3', beat, ['loc-d']);
    expect(await redis.zscore(`${prefix}:presence:seen`, 'loc-d')).toBe(String(beat));

    const atBeat = await readPresence(redis, prefix, 'loc-d', WINDOW_MS, beat + WINDOW_MS / 2);
    expect(atBeat.registers).toEqual([
      { sessionId: 's-d1', deviceId: 'dev-d1', lastSeenAt: new Date(beat).toISOString(), streams: 1 },
    ]); // the quiet one is stale
    // (the sweep's reading, with the heartbeats it read once)
    expect(
      (await readPresence(redis, prefix, 'loc-d', WINDOW_MS, beat + WINDOW_MS / 2, await readHeartbeats(redis, prefix)))
        .online,
    ).toBe(true);

    const afterBeat = await readPresence(redis, prefix, 'loc-d', WINDOW_MS, beat + WINDOW_MS + 1);
    expect(afterBeat).toEqual({ online: false, registers: [] });
    expect(await redis.exists(`${prefix}:presence:loc:loc-d`)).toBe(0); // its stale fields removed: the hash is gone
  });

  it('forgets the heartbeats of nodes long gone, and only those', async () => {
    const now = Date.now();
    await writeHeartbeat(redis, prefix, 'node-gone', now - 3 * WINDOW_MS, []);
    await writeHeartbeat(redis, prefix, 'node-here', now, []);
    await pruneHeartbeats(redis, prefix, await readHeartbeats(redis, prefix), now - 2 * WINDOW_MS);
    const left = await readHeartbeats(redis, prefix);
    expect([left.has('node-gone'), left.get('node-here')]).toEqual([false, now]);
  });
});
