/**
 * The node's clock for its event streams: one interval for every stream's keepalive, and one
 * timer for the next SSE_TIMEOUT, instead of two timers per stream.
 *
 * Each stream's timeout is jittered (±10%), so that streams opened together (a fleet reconnecting
 * after a deploy) do not all end, and reconnect, together again every SSE_TIMEOUT. The jitter
 * comes in LANES steps: a stream joins a lane at random, and every stream of a lane has the same
 * timeout, so a lane's streams expire in the order they joined. A lane is a Set (insertion order,
 * constant-time delete): joining and leaving stay O(1), and the one timer is armed for the
 * earliest lane head.
 */

/** What the clock drives on each stream. */
export interface ClockedStream {
  /** Epoch ms when the stream joined; it times out its lane's timeout later. */
  readonly joinedAt: number;
  /** Every keepalive interval: a `: keepalive` comment, or the check that a slow client still reads. */
  keepalive(): void;
  /** Its timeout is over. */
  timeout(): void;
}

/** A stream's timeout is SSE_TIMEOUT times a factor in [1 - JITTER, 1 + JITTER]. */
export const TIMEOUT_JITTER = 0.1;
/** Steps of the jitter: 21 lanes, from -10% to +10% by 1%. */
export const LANES = 21;

/** setTimeout's largest delay; longer ones would fire at once. */
const MAX_DELAY_MS = 2_147_483_647;

export class StreamClock {
  /** Per lane, its streams in join order. */
  private readonly lanes: Set<ClockedStream>[] = Array.from({ length: LANES }, () => new Set());
  /** Per lane, its streams' timeout (ms). */
  readonly laneTimeoutsMs: readonly number[];
  private count = 0;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  /** When the armed timeout timer fires (epoch ms). */
  private timeoutAt = Infinity;

  /** @param random a number in [0, 1) (Math.random), which picks each stream's lane */
  constructor(
    readonly keepaliveMs: number,
    readonly timeoutMs: number,
    private readonly random: () => number = Math.random,
  ) {
    this.laneTimeoutsMs = Array.from({ length: LANES }, (_, lane) =>
      Math.round(timeoutMs * (1 - TIMEOUT_JITTER + (2 * TIMEOUT_JITTER * lane) / (LANES - 1))),
    );
  }

  get size(): number {
    return this.count;
  }

  /** Adds the stream (once); returns when it will time out (epoch ms). */
  join(stream: ClockedStream): number {
    const lane = Math.min(LANES - 1, Math.floor(this.random() * LANES));
    const streams = this.lanes[lane]!;
    streams.add(stream);
    this.count += 1;
    this.keepaliveTimer ??= setInterval(() => this.beat(), this.keepaliveMs);
    // At its lane's tail, it times out last of its lane: only an empty lane's head moves the timer.
    const at = stream.joinedAt + this.laneTimeoutsMs[lane]!;
    if (streams.size === 1) this.arm(at);
    return at;
  }

  leave(stream: ClockedStream): void {
    if (this.remove(stream)) this.stopWhenEmpty();
  }

  /** After the last stream: no timer stays behind. */
  private stopWhenEmpty(): void {
    if (this.count > 0) return;
    clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = undefined;
    clearTimeout(this.timeoutTimer);
    this.timeoutTimer = undefined;
    this.timeoutAt = Infinity;
  }

  /** Deletes the stream from its lane (at most LANES look-ups); false when it was in none. */
  private remove(stream: ClockedStream): boolean {
    for (const streams of this.lanes) {
      if (streams.delete(stream)) {
        this.count -= 1;
        return true;
      }
    }
    return false;
  }

  private beat(): void {
    // A stream dropped meanwhile (a slow client) leaves its lane; deleting while iterating is safe.
    for (const streams of this.lanes) for (const stream of streams) stream.keepalive();
  }

  private arm(at: number): void {
    if (this.timeoutTimer && at >= this.timeoutAt) return;
    clearTimeout(this.timeoutTimer);
    this.timeoutAt = at;
    this.timeoutTimer = setTimeout(() => this.expire(), Math.min(Math.max(at - Date.now(), 0), MAX_DELAY_MS));
  }

  /** Ends every stream whose timeout is over, lane by lane from its head; then arms for the next. */
  private expire(): void {
    this.timeoutTimer = undefined;
    this.timeoutAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (let lane = 0; lane < LANES; lane++) {
      const streams = this.lanes[lane]!;
      for (const stream of streams) {
        const at = stream.joinedAt + this.laneTimeoutsMs[lane]!;
        if (at > now) {
          next = Math.min(next, at);
          break;
        }
        streams.delete(stream);
        this.count -= 1;
        stream.timeout(); // (its leave finds it gone)
      }
    }
    if (next < Infinity) this.arm(next);
    else this.stopWhenEmpty();
  }
}
