/**
 * The location's event stream, read over fetch: an EventSource cannot send the key or token in
 * a header, and neither belongs in a URL. Parsed by the service's own SSE parser. Reconnects
 * with its cursor (events/stream-cursor) and tells the board to read the work again
 * each time the stream opens, as the interface tells registers to do
 * (docs/register-interface.md, part 6 rule 2).
 */
import { SseParser } from '@pos/shared/clients/sse-parser';
import { furthest, parseEventId, type StreamCursor } from '@pos/shared/events/stream-cursor';
import type { StreamTarget } from './api';
import { AuthError, RequestError } from './http';
import { doubling } from '@pos/shared/util/doubling-pause';

export type Connection =
  | { state: 'connecting' }
  | { state: 'live' }
  /** Lost; the next attempt is at `retryAt` (epoch ms). */
  | { state: 'waiting'; retryAt: number }
  | { state: 'stopped' };

export interface LiveStreamHandlers {
  /** The stream is open: the server is subscribed, so a read now misses nothing that follows. */
  onOpen(): void;
  onEvent(type: 'order' | 'command' | 'location', data: unknown): void;
  onConnection(connection: Connection): void;
  /** A 401, or another answer that a retry would not change: the stream stops. */
  onRefused(error: Error): void;
}

export interface LiveStreamOptions {
  /** Nothing at all (not even a keepalive) for this long: the connection is taken as dead. */
  watchdogMs: number;
  /** The longest wait between attempts; the first is about 1 s (the ceiling of the server's `retry:`), doubling. */
  backoffCapMs: number;
}

export class LiveStream {
  private cursor: StreamCursor | undefined;
  private stopped = false;
  private attempt = 0;
  private retryMs = 1000;
  private abort: AbortController | undefined;
  private wake: (() => void) | undefined;
  private readonly onOnline = () => this.retryNow();

  constructor(
    private readonly target: (cursor: StreamCursor | undefined) => StreamTarget,
    private readonly handlers: LiveStreamHandlers,
    private readonly options: LiveStreamOptions = { watchdogMs: 60_000, backoffCapMs: 15_000 },
  ) {}

  start(): void {
    window.addEventListener('online', this.onOnline);
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    window.removeEventListener('online', this.onOnline);
    this.abort?.abort();
    this.wake?.();
  }

  /** Skips the rest of a wait (the user asked, or the device is back online). */
  retryNow(): void {
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const outcome = await this.connect();
      if (this.stopped || outcome === 'refused') break;
      // a stream that delivered anything was healthy: start the waits over
      if (outcome === 'healthy') this.attempt = 0;
      const waitMs =
        doubling(this.attempt + 1, [this.retryMs, this.options.backoffCapMs]) * (0.8 + Math.random() * 0.4);
      this.attempt += 1;
      this.handlers.onConnection({ state: 'waiting', retryAt: Date.now() + waitMs });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    this.handlers.onConnection({ state: 'stopped' });
  }

  private async connect(): Promise<'healthy' | 'failed' | 'refused'> {
    this.handlers.onConnection({ state: 'connecting' });
    const abort = new AbortController();
    this.abort = abort;
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => abort.abort(), this.options.watchdogMs);
    };
    arm();
    try {
      const { url, headers } = this.target(this.cursor);
      const response = await fetch(url, {
        headers: { ...headers, accept: 'text/event-stream' },
        cache: 'no-store',
        credentials: 'omit',
        signal: abort.signal,
      });
      if (!response.ok || !response.body) {
        const status = response.status;
        await response.body?.cancel().catch(() => undefined);
        if (status === 401) {
          this.handlers.onRefused(new AuthError('The service no longer accepts this sign-in'));
          return 'refused';
        }
        if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
          this.handlers.onRefused(new RequestError(status, `The event stream was refused (${status})`));
          return 'refused';
        }
        return 'failed';
      }
      this.handlers.onConnection({ state: 'live' });
      this.handlers.onOpen();
      return await this.read(response.body, arm);
    } catch {
      return 'failed'; // network error, watchdog, or stop()
    } finally {
      clearTimeout(watchdog);
    }
  }

  private async read(body: ReadableStream<Uint8Array>, arm: () => void): Promise<'healthy' | 'failed'> {
    let healthy = false;
    const parser = new SseParser({
      onEvent: (event) => {
        const position = parseEventId(event.id);
        if (position) this.cursor = furthest(this.cursor, position);
        if (event.event !== 'order' && event.event !== 'command' && event.event !== 'location') return;
        this.handlers.onEvent(event.event, JSON.parse(event.data));
      },
      onRetry: (ms) => {
        this.retryMs = Math.max(ms, 250);
      },
    });
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || this.stopped) break;
        arm();
        healthy = true;
        parser.feed(value);
      }
    } catch {
      // the connection dropped or was aborted: reconnect
    } finally {
      reader.releaseLock();
    }
    return healthy ? 'healthy' : 'failed';
  }
}
