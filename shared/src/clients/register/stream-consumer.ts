/**
 * The register client's event stream consumer: one connection at a time, each watched by a
 * watchdog; reconnects with its cursor after a full-jitter backoff, polls the work once every
 * reconnection is open (spec part 6), and stops for good on an answer a retry cannot change.
 */
import type { CommandRecord, OrderRecord, WorkRecord } from '../../domain/records';
import { furthest, parseEventId, type StreamCursor } from '../../events/stream-cursor';
import { fullJitter } from '../../util/jitter';
import { pause } from '../../util/pause';
import { ApiAuthError, ApiError, errorFromResponse } from '../errors';
import { SseParser } from '../sse-parser';
import {
  DEFAULT_BACKOFF_BASE_MS,
  DEFAULT_BACKOFF_CAP_MS,
  DEFAULT_WATCHDOG_MS,
  type DisconnectReason,
  type StreamHandlers,
  type StreamOptions,
  type StreamState,
  type WorkStream,
} from './options';
import { Watchdog } from './watchdog';
import { doubling } from '../../util/doubling-pause';

/** What the consumer needs of the client (RegisterClient): the stream's request and the poll. */
export interface StreamSource {
  streamRequest(cursor: StreamCursor | undefined, signal: AbortSignal): Promise<Response>;
  listWork(signal?: AbortSignal): Promise<WorkRecord[]>;
}

/** Why one connection ended, as the reconnect loop needs it. */
interface Ended {
  reason: DisconnectReason;
  healthy: boolean;
  error?: Error;
  /** Reconnecting cannot help (401, other 4xx). */
  fatal?: ApiError;
}

export class StreamConsumer implements WorkStream {
  readonly done: Promise<void>;
  private current: StreamCursor | undefined;
  private readonly stopper = new AbortController();
  private serverRetryMs: number | undefined;
  private readonly watchdogMs: number;
  private readonly baseMs: number;
  private readonly capMs: number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;

  constructor(
    private readonly client: StreamSource,
    private readonly handlers: StreamHandlers,
    private readonly options: StreamOptions,
  ) {
    this.current = options.from;
    this.watchdogMs = options.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    this.baseMs = options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS;
    this.capMs = options.backoffCapMs ?? DEFAULT_BACKOFF_CAP_MS;
    this.sleep = options.sleep ?? pause;
    this.done = this.run();
    // close() and onState report the outcome; an unobserved `done` must not crash the process.
    this.done.catch(() => undefined);
  }

  get cursor(): StreamCursor | undefined {
    return this.current;
  }

  async close(): Promise<void> {
    this.stopper.abort();
    await this.done.catch(() => undefined);
  }

  private get stopped(): boolean {
    return this.stopper.signal.aborted;
  }

  private state(state: StreamState): void {
    try {
      this.handlers.onState?.(state);
    } catch {
      // An observer's failure must not break the consumer.
    }
  }

  private report(error: Error): void {
    try {
      this.handlers.onError?.(error);
    } catch {
      // As above.
    }
  }

  private async run(): Promise<void> {
    let failures = 0;
    let attempts = 0;
    try {
      while (!this.stopped) {
        // The first connection replays everything unless it starts from a cursor; every
        // reconnection polls once it is open (spec part 6).
        const poll = attempts > 0 || this.options.from !== undefined;
        attempts += 1;
        const ended = await this.connectOnce(poll);
        if (this.stopped) break;
        this.state({ state: 'disconnected', reason: ended.reason, ...(ended.error ? { error: ended.error } : {}) });
        if (ended.fatal) throw ended.fatal;
        if (ended.healthy) failures = 0;
        const base =
          this.options.honourServerRetry === false || this.serverRetryMs === undefined
            ? this.baseMs
            : this.serverRetryMs;
        const ceilingMs = doubling(failures + 1, [base, this.capMs]);
        const delayMs = fullJitter(ceilingMs);
        failures += 1;
        this.state({ state: 'backoff', delayMs, ceilingMs, attempt: failures });
        await this.sleep(delayMs, this.stopper.signal);
      }
      this.state({ state: 'closed' });
    } catch (err) {
      this.state({ state: 'closed', error: err as Error });
      throw err;
    }
  }

  /** One connection, from connect to its end; never throws. */
  private async connectOnce(poll: boolean): Promise<Ended> {
    const connection = new AbortController();
    const stop = () => connection.abort();
    this.stopper.signal.addEventListener('abort', stop, { once: true });
    let watchdogFired = false;
    const watchdog = new Watchdog(this.watchdogMs, () => {
      watchdogFired = true;
      connection.abort();
    });
    const health = { healthy: false };

    try {
      this.state({ state: 'connecting', ...(this.current ? { cursor: { ...this.current } } : {}) });
      const response = await this.client.streamRequest(this.current, connection.signal);
      watchdog.arm();
      if (response.status !== 200 || !response.body) {
        const text = await response.text();
        const error = errorFromResponse(
          response.status,
          response.headers.get('content-type') ?? '',
          text,
          response.headers.get('retry-after') ?? undefined,
        );
        const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
        return { reason: 'http-status', healthy: false, error, ...(retryable ? {} : { fatal: error }) };
      }
      this.state({ state: 'open' });

      const reader = response.body.getReader();
      if (poll) {
        // The stream is open, so nothing published from here on is missed; the poll catches
        // what changed while disconnected and the replay does not cover.
        watchdog.disarm();
        const fatal = await this.poll();
        if (fatal) {
          await reader.cancel().catch(() => undefined);
          return { reason: 'http-status', healthy: health.healthy, error: fatal, fatal };
        }
        watchdog.arm();
      }
      return await this.readEvents(reader, watchdog, health);
    } catch (err) {
      return {
        reason: watchdogFired ? 'watchdog' : 'network',
        healthy: health.healthy,
        ...(this.stopped ? {} : { error: err as Error }),
      };
    } finally {
      watchdog.disarm();
      this.stopper.signal.removeEventListener('abort', stop);
    }
  }

  /** Reads an open stream to its end: each event delivered, the cursor kept past it; why it ended. */
  private async readEvents(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    watchdog: Watchdog,
    health: { healthy: boolean },
  ): Promise<Ended> {
    const events: { type: string; data: string; id: string }[] = [];
    const parser = new SseParser({
      onEvent: (e) => events.push({ type: e.event, data: e.data, id: e.id }),
      onRetry: (ms) => (this.serverRetryMs = Math.min(this.capMs, Math.max(100, ms))),
      onComment: () => (health.healthy = true),
    });
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { reason: 'ended', healthy: health.healthy };
      watchdog.arm();
      parser.feed(value);
      for (const event of events.splice(0)) {
        health.healthy = true;
        try {
          await this.deliver(event.type, event.data);
        } catch (err) {
          this.report(err as Error);
          await reader.cancel().catch(() => undefined);
          return { reason: 'handler-error', healthy: health.healthy, error: err as Error };
        }
        const next = parseEventId(event.id);
        if (next) this.current = furthest(this.current, next);
      }
    }
  }

  private async deliver(type: string, data: string): Promise<void> {
    if (type !== 'order' && type !== 'command') return;
    let record: unknown;
    try {
      record = JSON.parse(data);
    } catch {
      this.report(new Error(`unreadable ${type} event: ${data.slice(0, 200)}`));
      return;
    }
    if (type === 'order') await this.handlers.onOrder?.(record as OrderRecord);
    else await this.handlers.onCommand?.(record as CommandRecord);
  }

  /** The poll after a reconnect; returns an auth error that ends the consumer. */
  private async poll(): Promise<ApiAuthError | undefined> {
    let work: WorkRecord[];
    try {
      work = await this.client.listWork(this.stopper.signal);
    } catch (err) {
      if (err instanceof ApiAuthError) return err;
      if (!this.stopped) this.report(err as Error);
      return undefined;
    }
    try {
      await this.handlers.onPoll?.(work);
    } catch (err) {
      this.report(err as Error);
    }
    return undefined;
  }
}
