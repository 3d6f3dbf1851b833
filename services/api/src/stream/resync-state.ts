/**
 * A stream's part in the re-reads of its location after Redis losses: since when it may have
 * missed what was published, whether a read covering that is in flight, and how many reads
 * failed in a row. The stream's phase (held until a read is in) is the stream's own.
 */

/** Reads of a location that may fail in a row (MongoDB away) before its waiting streams end. */
export const RESYNC_ATTEMPTS = 3;

export class ResyncState {
  /**
   * The earliest Redis loss (epoch ms, when the node saw it) that no re-read begun after it
   * covers yet: the stream may have missed what was published from shortly before then.
   */
  private lossAt: number | undefined;
  /** The loss that the re-read in flight covers; set from `begin` until the read is taken. */
  private readLossAt: number | undefined;
  /** Re-reads that failed in a row. */
  private failures = 0;

  /** The node saw its subscriptions lost at `lostAt` (the earliest such loss is kept). */
  noteLoss(lostAt: number): void {
    this.lossAt = Math.min(lostAt, this.lossAt ?? lostAt);
  }

  /** A loss not yet covered by a read begun after it. */
  get uncovered(): boolean {
    return this.lossAt !== undefined;
  }

  /** A loss waits for its read and none is in flight. */
  get awaitsRead(): boolean {
    return this.readLossAt === undefined && this.lossAt !== undefined;
  }

  /** A read begins: the loss it covers (`now` when none was noted). */
  begin(now: number): number {
    const lossAt = this.lossAt ?? now;
    this.readLossAt = lossAt;
    this.lossAt = undefined;
    return lossAt;
  }

  /** The read is in: the loss it covered, or undefined when none was in flight. */
  take(): number | undefined {
    const lossAt = this.readLossAt;
    this.readLossAt = undefined;
    if (lossAt !== undefined) this.failures = 0;
    return lossAt;
  }

  /**
   * The read failed: its loss waits for the next read ('retry'), or, after RESYNC_ATTEMPTS in a
   * row, the stream should end ('give-up'); undefined when no read was in flight.
   */
  failed(): 'retry' | 'give-up' | undefined {
    const lossAt = this.readLossAt;
    this.readLossAt = undefined;
    if (lossAt === undefined) return undefined;
    this.noteLoss(lossAt);
    this.failures += 1;
    return this.failures < RESYNC_ATTEMPTS ? 'retry' : 'give-up';
  }

  /** What must be remembered of what is sent: from `now`, or from the loss still to be covered. */
  rememberFrom(now: number): number {
    return Math.min(now, this.lossAt ?? now, this.readLossAt ?? now);
  }

  clear(): void {
    this.lossAt = undefined;
    this.readLossAt = undefined;
  }
}
