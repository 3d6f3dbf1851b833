/**
 * Random marks drawn from a pool (util/random-marks.ts): an order's applied-job entries tell attempts apart by them.
 */
import { MARKS_PER_FILL, randomMarks } from '@pos/shared/util/random-marks';

describe('random marks', () => {
  it('gives base64url marks of the asked size, every one different, across refills of the pool', () => {
    const next = randomMarks(6);
    // three pools' worth and one more: the refills must not hand out a mark again
    const marks = Array.from({ length: 3 * MARKS_PER_FILL + 1 }, () => next());
    for (const mark of marks) expect(mark).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(new Set(marks).size).toBe(marks.length);
  });
});
