import { ClockedStream, LANES, StreamClock } from '@pos/api/stream/stream-clock';

/** A stream the clock drives: it counts keepalives and leaves the clock when it times out. */
function stream(clock: StreamClock, joinedAt = Date.now()) {
  const s: ClockedStream & { keepalives: number; timedOut: boolean } = {
    joinedAt,
    keepalives: 0,
    timedOut: false,
    keepalive: () => (s.keepalives += 1),
    timeout: () => {
      s.timedOut = true;
      clock.leave(s);
    },
  };
  clock.join(s);
  return s;
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('StreamClock: one keepalive timer and one timeout timer for all streams', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('beats every stream each interval, and times streams of one lane out in the order they joined', () => {
    const clock = new StreamClock(100, 1_000, () => 0.5); // the middle lane: no jitter
    const first = stream(clock);
    jest.advanceTimersByTime(300);
    const second = stream(clock);
    jest.advanceTimersByTime(400);
    expect([first.keepalives, second.keepalives]).toEqual([7, 4]);
    jest.advanceTimersByTime(300); // 1,000 ms after the first joined
    expect([first.timedOut, second.timedOut]).toEqual([true, false]);
    jest.advanceTimersByTime(299);
    expect(second.timedOut).toBe(false);
    jest.advanceTimersByTime(1);
    expect(second.timedOut).toBe(true);
    expect(clock.size).toBe(0);
  });

  it('leaves no timer behind once the last stream has left', () => {
    jest.useRealTimers();
    const before = timers();
    const clock = new StreamClock(100, 60_000);
    const streams = Array.from({ length: 50 }, () => stream(clock));
    expect(timers()).toBe(before + 2);
    for (const s of streams) clock.leave(s);
    expect(timers()).toBe(before);
  });
});

describe("StreamClock: each stream's timeout jittered by ±10%, in lanes", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A random source that puts the streams joining next in these lanes. */
  const lanes =
    (...picks: number[]) =>
    () =>
      (picks.shift()! + 0.5) / LANES;

  it('has 21 lanes from 0.9 to 1.1 times SSE_TIMEOUT', () => {
    const clock = new StreamClock(100, 1_000);
    expect(clock.laneTimeoutsMs).toEqual(Array.from({ length: 21 }, (_, i) => 900 + 10 * i));
  });

  it("ends each stream at its own lane's timeout, earliest first across lanes, with one timer", () => {
    const clock = new StreamClock(10_000, 1_000, lanes(20, 0, 10, 0));
    const t0 = Date.now();
    const late = stream(clock, t0); // 1,100 ms
    const early = stream(clock, t0); // 900 ms
    const middle = stream(clock, t0); // 1,000 ms
    jest.advanceTimersByTime(50);
    const earlyToo = stream(clock); // 900 ms after it joined, at 950
    expect(jest.getTimerCount()).toBe(2); // the keepalive interval and one timeout timer
    const ended = () => [late, early, middle, earlyToo].map((s) => s.timedOut);
    jest.advanceTimersByTime(849); // 899
    expect(ended()).toEqual([false, false, false, false]);
    jest.advanceTimersByTime(1); // 900
    expect(ended()).toEqual([false, true, false, false]);
    jest.advanceTimersByTime(50); // 950
    expect(ended()).toEqual([false, true, false, true]);
    jest.advanceTimersByTime(50); // 1,000
    expect(ended()).toEqual([false, true, true, true]);
    jest.advanceTimersByTime(99);
    expect(late.timedOut).toBe(false);
    jest.advanceTimersByTime(1); // 1,100
    expect(late.timedOut).toBe(true);
    expect(clock.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('tells each stream when it will end; a lane head that leaves early changes nothing for the others', () => {
    const clock = new StreamClock(10_000, 1_000, lanes(0, 5));
    const t0 = Date.now();
    const first = { joinedAt: t0, keepalive: () => undefined, timeout: jest.fn() };
    const second = { joinedAt: t0, keepalive: () => undefined, timeout: jest.fn() };
    expect(clock.join(first)).toBe(t0 + 900);
    expect(clock.join(second)).toBe(t0 + 950);
    clock.leave(first);
    clock.leave(first); // twice: nothing more
    expect(clock.size).toBe(1);
    jest.advanceTimersByTime(949);
    expect(second.timeout).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(second.timeout).toHaveBeenCalledTimes(1);
    expect(first.timeout).not.toHaveBeenCalled();
    expect(clock.size).toBe(0);
  });

  it('spreads streams over every lane at random', () => {
    const clock = new StreamClock(10_000, 1_000);
    const t0 = Date.now();
    const ends = Array.from(
      { length: 2_000 },
      () => clock.join({ joinedAt: t0, keepalive: () => undefined, timeout: () => undefined }) - t0,
    );
    expect(Math.min(...ends)).toBe(900);
    expect(Math.max(...ends)).toBe(1_100);
    expect(new Set(ends).size).toBe(LANES);
  });
});
