/**
 * A pause that starts at the first of its bounds and doubles each time it is taken, up to the
 * last; `reset` starts it over (a poll that found work polls again soon).
 */
export class DoublingPause {
  private ms: number;

  constructor(private readonly bounds: readonly [first: number, last: number]) {
    this.ms = bounds[0];
  }

  /** The pause to take now; the next one is twice as long, up to the last bound. */
  take(): number {
    const ms = this.ms;
    this.ms = Math.min(ms * 2, this.bounds[1]);
    return ms;
  }

  reset(): void {
    this.ms = this.bounds[0];
  }
}
