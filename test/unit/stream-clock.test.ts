import { ClockedStream, StreamClock } from '@pos/api/stream/stream-clock';

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

  it('beats every stream each interval, and times streams out in the order they joined', () => {
    const clock = new StreamClock(100, 1_000);
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
