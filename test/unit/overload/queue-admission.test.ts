/**
 * The admission's limit (services/api/src/overload/queue-admission.ts): throughput × wait target,
 * where the throughput is the most the workers finished in any second of the last minute, so a
 * spell of low goodput does not shrink it; past a minute it follows what they finish now.
 */
import { QueueAdmission } from '@pos/api/overload/queue-admission';

describe('the queue admission', () => {
  let now = 1_000_000;
  const admission = new QueueAdmission(1, { targetWaitMs: 500, floor: 1 }, () => now);
  /** `perSecond` jobs admitted and finished in each of `seconds` seconds. */
  const finish = (perSecond: number, seconds: number) => {
    for (let s = 0; s < seconds; s++) {
      for (let i = 0; i < perSecond; i++) {
        admission.release(admission.acquire(0, 'critical')!, true);
        now += 1000 / perSecond;
      }
      admission.signals(); // read now and then, as every admission does
    }
  };
  const limit = () => admission.signals()[0]!.limit;

  it('holds to the minute peak through a spell of low throughput, and follows it after a minute', () => {
    finish(100, 3);
    expect(limit()).toBe(50);
    finish(10, 30); // an overload that slows the workers: the limit does not starve them
    expect(limit()).toBe(50);
    finish(10, 40);
    expect(limit()).toBe(5);
  });

  it('says whether it refused anything within a while, for the refusals in front of the app', () => {
    const fresh = new QueueAdmission(1, { targetWaitMs: 500, floor: 1 }, () => now);
    expect(fresh.refusedWithin(1_000)).toBe(false);
    expect(fresh.acquire(0, 'critical')).toBeDefined();
    // the floor (1) full, and the oldest job waiting past the target: refused
    now += 600;
    expect(fresh.acquire(0, 'critical')).toBeUndefined();
    expect(fresh.refusedWithin(1_000)).toBe(true);
    now += 1_001;
    expect(fresh.refusedWithin(1_000)).toBe(false);
    expect(fresh.admits(0, 'critical')).toBe(false);
    expect(fresh.refusedWithin(1_000)).toBe(true);
  });
});
