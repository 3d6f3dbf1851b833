/**
 * The one backoff: a pause that starts at the first of its bounds and doubles with each attempt, up
 * to the last. `doubling` for code that counts its attempts (reconnections, retries, a jittered
 * ceiling), `DoublingPause` for a loop that keeps the count for itself.
 */

/** The pause before attempt `attempt` (from 1): `first`, doubled each attempt, at most `last`. */
export function doubling(attempt: number, [first, last]: readonly [first: number, last: number]): number {
  return Math.min(first * 2 ** Math.min(Math.max(attempt - 1, 0), 40), last);
}

export class DoublingPause {
  private attempt = 1;

  constructor(private readonly bounds: readonly [first: number, last: number]) {}

  /** The pause to take now; the next one is twice as long, up to the last bound. */
  take(): number {
    return doubling(this.attempt++, this.bounds);
  }

  /** Starts it over (a poll that found work polls again soon). */
  reset(): void {
    this.attempt = 1;
  }
}
