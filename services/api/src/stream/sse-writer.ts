/**
 * Server-sent events framing on one response: the `retry:` preamble, events, `: keepalive`
 * comments, and the bound on what a slow client may leave unread.
 *
 * The bound is checked before each write, on the bytes earlier writes left unwritten (a write
 * counts as unwritten until the event loop turns, even when the kernel took it at once). A
 * burst (the replay a stream starts with) is exempt: its size is the location's work, not the
 * client's slowness; its bytes are allowed on top of the bound until the backlog drains.
 */

/** What the writer needs of its output: an http.ServerResponse, or any Writable. */
export interface SseSink {
  write(chunk: string): boolean;
  end(): void;
  destroy(): void;
  /** Bytes accepted but not yet handed to the kernel (for a response: its own and its socket's). */
  readonly writableLength: number;
}

export interface SseWriterOptions {
  keepaliveMs: number;
  /** Unwritten bytes above which the client is dropped rather than buffered for. */
  maxBufferBytes: number;
  /** Called once when the client is dropped for being too slow. */
  onOverflow(): void;
}

/** An event's data as SSE `data:` lines, one per line of the data (each ends with a newline). */
export function dataLines(data: string): string {
  return data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('');
}

export class SseWriter {
  private keepalive: NodeJS.Timeout | undefined;
  private closed = false;
  private inBurst = false;
  /** Bytes of the last burst, allowed on top of the bound until the backlog is back under it. */
  private burstBytes = 0;

  constructor(
    private readonly sink: SseSink,
    private readonly options: SseWriterOptions,
  ) {}

  /** The reconnection delay for the client, then keepalive comments until the end. */
  start(retryMs: number): void {
    this.write(`retry: ${retryMs}\n\n`);
    this.keepalive = setInterval(() => this.comment('keepalive'), this.options.keepaliveMs);
  }

  /**
   * One event, its data framed beforehand by `dataLines` (once, however many streams send it);
   * false when the stream is closed (or was just dropped for being too slow).
   */
  event(type: string, id: string, lines: string): boolean {
    return this.write(`id: ${id}\nevent: ${type}\n${lines}\n`);
  }

  comment(text: string): boolean {
    return this.write(`: ${text}\n\n`);
  }

  /** Writes what `write` writes without counting it against the bound (see above). */
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

  /** Ends the response normally: the client sees the end of the stream and reconnects. */
  end(): void {
    if (!this.stop()) return;
    this.sink.end();
  }

  /** Cuts the connection (the client is gone or too slow). */
  destroy(): void {
    if (!this.stop()) return;
    this.sink.destroy();
  }

  private stop(): boolean {
    if (this.closed) return false;
    this.closed = true;
    clearInterval(this.keepalive);
    this.keepalive = undefined;
    return true;
  }

  private write(frame: string): boolean {
    if (this.closed) return false;
    if (this.inBurst) {
      this.burstBytes += Buffer.byteLength(frame);
    } else {
      const backlog = this.sink.writableLength;
      if (backlog <= this.options.maxBufferBytes) this.burstBytes = 0;
      else if (backlog > this.options.maxBufferBytes + this.burstBytes) {
        this.destroy();
        this.options.onOverflow();
        return false;
      }
    }
    this.sink.write(frame);
    return true;
  }
}
