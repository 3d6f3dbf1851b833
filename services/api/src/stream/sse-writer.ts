/**
 * Server-sent events framing on one response: the `retry:` preamble, events, `: keepalive`
 * comments, and the bounds on what the server holds for a slow client.
 *
 * Frames go to the connection while it takes them; once it refuses one (its buffer is full),
 * the next wait here, in order, until it drains. A burst (the replay a stream starts with) is
 * thus written page by page as the client reads it, never all at once into the connection.
 * Two bounds end a stream as too slow:
 * - live frames: the connection's backlog plus the live frames waiting may not exceed
 *   `maxBufferBytes` (a burst's bytes are exempt: their size is the location's work, not the
 *   client's slowness; those handed to the connection are forgiven until it drains);
 * - a client that takes nothing for a whole keepalive interval while frames wait for it.
 * A write counts as unwritten until the event loop turns, even when the kernel took it at once.
 */

/** What ends the output: the response (whose socket the frames go to), or the sink itself. */
export interface SseCloser {
  end(): void;
  destroy(): void;
}

/** What the writer needs of its output: a response's socket, or any Writable. */
export interface SseSink extends SseCloser {
  /** False when the sink's buffer is full; it emits 'drain' once it has emptied. */
  write(chunk: string | Buffer): boolean;
  /** Bytes accepted but not yet handed to the kernel. */
  readonly writableLength: number;
  on(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

export interface SseWriterOptions {
  /** The interval at which `tick` is called (by the node's StreamClock). */
  keepaliveMs: number;
  /** Unwritten bytes above which the client is dropped rather than buffered for. */
  maxBufferBytes: number;
  /** Called once when the client is dropped for being too slow. */
  onOverflow(): void;
}

/** An event's frame: its id, type and `data:` lines, and the blank line that ends it. */
export function eventFrame(type: string, id: string, lines: string): string {
  return `id: ${id}\nevent: ${type}\n${lines}\n`;
}

/** An event's data as SSE `data:` lines, one per line of the data (each ends with a newline). */
export function dataLines(data: string): string {
  return data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('');
}

/** The keepalive comment, the same bytes for every stream. */
const KEEPALIVE = Buffer.from(': keepalive\n\n');

interface WaitingFrame {
  frame: string | Buffer;
  bytes: number;
  burst: boolean;
}

export class SseWriter {
  private closed = false;
  private inBurst = false;
  /** Frames the sink has not taken yet, in order. */
  private waiting: WaitingFrame[] | undefined;
  private waitingLiveBytes = 0;
  /** From a write the sink refused until its 'drain'. */
  private blocked = false;
  /** Burst bytes handed to the sink since its backlog was last within the bound (exempt from it). */
  private burstInSink = 0;
  /** When the client last took something: a drain, or a smaller backlog than last seen. */
  private progressAt = Date.now();
  private backlogSeen = 0;
  /** (Bound rather than an arrow: see ClientStream's note on per-stream memory.) */
  private readonly onDrain = this.drained.bind(this);

  /**
   * @param sink where frames are written (a response's socket: see ClientStream.attach)
   * @param closer what ends or cuts the output (the response); the sink itself by default
   */
  constructor(
    private readonly sink: SseSink,
    private readonly options: SseWriterOptions,
    private readonly closer: SseCloser = sink,
  ) {
    sink.on('drain', this.onDrain);
  }

  /** The reconnection delay for the client (at the start, and again before a shutdown ends the stream). */
  retry(retryMs: number): void {
    this.write(`retry: ${retryMs}\n\n`);
  }

  /**
   * One event, its data framed beforehand by `dataLines` (once, however many streams send it);
   * false when the stream is closed (or was just dropped for being too slow).
   */
  event(type: string, id: string, lines: string): boolean {
    return this.write(eventFrame(type, id, lines));
  }

  /** A whole frame, built once for every stream that sends the same bytes (see StreamFrame). */
  frame(bytes: Buffer): boolean {
    return this.write(bytes);
  }

  comment(text: string): boolean {
    return this.write(`: ${text}\n\n`);
  }

  /** Writes what `write` writes as a burst: paced by the client, and exempt from the live bound. */
  burst(write: () => void): void {
    this.inBurst = true;
    try {
      write();
    } finally {
      this.inBurst = false;
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Ends the response normally: the client sees the end and reconnects. Frames still waiting
   * are dropped; the client's cursor is before them, so its reconnection replays them.
   */
  end(): void {
    if (!this.stop()) return;
    this.waiting = undefined;
    this.closer.end();
  }

  /** Cuts the connection (the client is gone or too slow). */
  destroy(): void {
    if (!this.stop()) return;
    this.waiting = undefined;
    this.closer.destroy();
  }

  private stop(): boolean {
    if (this.closed) return false;
    this.closed = true;
    this.sink.off('drain', this.onDrain);
    return true;
  }

  private write(frame: string | Buffer): boolean {
    if (this.closed) return false;
    const bytes = typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length;
    if (!this.inBurst) {
      const backlog = this.sink.writableLength;
      if (backlog <= this.options.maxBufferBytes) this.burstInSink = 0;
      if (backlog + this.waitingLiveBytes > this.options.maxBufferBytes + this.burstInSink) {
        this.overflow();
        return false;
      }
    }
    if (this.blocked || this.waiting?.length) {
      (this.waiting ??= []).push({ frame, bytes, burst: this.inBurst });
      if (!this.inBurst) this.waitingLiveBytes += bytes;
    } else this.handOver(frame, bytes, this.inBurst);
    return true;
  }

  /** Hands waiting frames to the sink until it refuses one. */
  private flush(): void {
    while (!this.closed && !this.blocked && this.waiting?.length) {
      const entry = this.waiting.shift()!;
      if (!entry.burst) this.waitingLiveBytes -= entry.bytes;
      this.handOver(entry.frame, entry.bytes, entry.burst);
    }
  }

  private handOver(frame: string | Buffer, bytes: number, burst: boolean): void {
    if (burst) this.burstInSink += bytes;
    if (!this.sink.write(frame) && !this.blocked) {
      this.blocked = true;
      this.progressAt = Date.now();
      this.backlogSeen = this.sink.writableLength;
    }
  }

  private drained(): void {
    this.blocked = false;
    this.burstInSink = 0;
    this.progressAt = Date.now();
    this.flush();
  }

  /** Every keepalive interval: a comment when nothing waits; else the client must have taken something. */
  tick(): void {
    if (this.closed) return;
    const backlog = this.sink.writableLength;
    if (backlog < this.backlogSeen) this.progressAt = Date.now();
    this.backlogSeen = backlog;
    if (!this.blocked && !this.waiting?.length) {
      this.write(KEEPALIVE);
    } else if (Date.now() - this.progressAt >= this.options.keepaliveMs) {
      this.overflow();
    }
  }

  private overflow(): void {
    this.destroy();
    this.options.onOverflow();
  }
}
