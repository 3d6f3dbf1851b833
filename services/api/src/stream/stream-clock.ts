/**
 * The node's clock for its event streams: one interval for every stream's keepalive, and one
 * timer for the SSE_TIMEOUT of the stream that opened first, instead of two timers per stream.
 * Every stream has the same timeout, so streams expire in the order they joined: a Set (which
 * keeps insertion order and deletes in constant time) is the whole queue.
 */

/** What the clock drives on each stream. */
export interface ClockedStream {
  /** Epoch ms when the stream joined; it times out SSE_TIMEOUT later. */
  readonly joinedAt: number;
  /** Every keepalive interval: a `: keepalive` comment, or the check that a slow client still reads. */
  keepalive(): void;
  /** SSE_TIMEOUT is over. */
  timeout(): void;
}

/** setTimeout's largest delay; longer ones would fire at once. */
const MAX_DELAY_MS = 2_147_483_647;

export class StreamClock {
  private readonly streams = new Set<ClockedStream>();
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  /** When the armed timeout timer fires (epoch ms). */
  private timeoutAt = Infinity;

  constructor(
    readonly keepaliveMs: number,
    readonly timeoutMs: number,
  ) {}

  get size(): number {
    return this.streams.size;
  }

  join(stream: ClockedStream): void {
    this.streams.add(stream);
    this.keepaliveTimer ??= setInterval(() => this.beat(), this.keepaliveMs);
    if (this.streams.size === 1) this.arm(stream.joinedAt + this.timeoutMs);
  }

  leave(stream: ClockedStream): void {
    if (!this.streams.delete(stream) || this.streams.size > 0) return;
    // The last one: no timer stays behind (the timeout timer, if armed, finds nothing to end).
    clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = undefined;
    clearTimeout(this.timeoutTimer);
    this.timeoutTimer = undefined;
    this.timeoutAt = Infinity;
  }

  private beat(): void {
    // A stream dropped meanwhile (a slow client) leaves the set; deleting while iterating is safe.
    for (const stream of this.streams) stream.keepalive();
  }

  private arm(at: number): void {
    if (this.timeoutTimer && at >= this.timeoutAt) return;
    clearTimeout(this.timeoutTimer);
    this.timeoutAt = at;
    this.timeoutTimer = setTimeout(() => this.expire(), Math.min(Math.max(at - Date.now(), 0), MAX_DELAY_MS));
  }

  private expire(): void {
    this.timeoutTimer = undefined;
    this.timeoutAt = Infinity;
    const now = Date.now();
    for (const stream of this.streams) {
      const at = stream.joinedAt + this.timeoutMs;
      if (at > now) {
        this.arm(at);
        return;
      }
      stream.timeout(); // it leaves the set
    }
  }
}
