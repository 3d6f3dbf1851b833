/**
 * The reference register client of the service interface (parts 4 to 8): lists work, reports
 * outcomes, acknowledges commands and consumes the event stream with the client-side behaviour
 * the spec suggests (30 s request deadline, 60 s stream watchdog, 1-2-4-8 s backoff capped at
 * 60 s, with full jitter, reconnect with the cursor, then poll). Used by the demo, the benchmark
 * and the tests.
 */
import { randomUUID } from 'node:crypto';
import type { OrderState } from '../domain/order-state';
import { PROBLEM_KINDS, type ProblemBody } from '../domain/problem';
import type { CommandRecord, OrderRecord, WorkRecord } from '../domain/records';
import { cursorQuery, furthest, parseEventId, type StreamCursor } from '../events/stream-cursor';
import { fullJitter } from '../util/jitter';
import { pause } from '../util/pause';
import { parseJson, problemOf, REQUEST_TIMEOUT_MS } from './json-http';
import { SseParser } from './sse-parser';

export const DEFAULT_WATCHDOG_MS = 60_000;
export const DEFAULT_BACKOFF_BASE_MS = 1_000;
export const DEFAULT_BACKOFF_CAP_MS = 60_000;
/** Retries of a request whose outcome is unknown or that was turned away for now. */
export const DEFAULT_REQUEST_RETRIES = 4;
export const DEFAULT_RETRY_BASE_MS = 500;
export const DEFAULT_RETRY_CAP_MS = 8_000;

/** Any answer other than the expected success. */
export class RegisterApiError extends Error {
  constructor(
    readonly status: number,
    /** The response body as received. */
    readonly text: string,
    message = `HTTP ${status}`,
  ) {
    super(message);
    this.name = 'RegisterApiError';
  }
}

/**
 * The two 401s of part 5: `session-not-valid` is the text/plain `{"error":"Session not valid"}`
 * (unknown, empty or revoked key), `unauthorized` the JSON `{"message":"Unauthorized","uid":null}`
 * (expired session or a key of the wrong type). Either way the key is no good; retrying is useless.
 */
export type AuthFailure = 'session-not-valid' | 'unauthorized';

export class RegisterAuthError extends RegisterApiError {
  constructor(
    readonly failure: AuthFailure,
    text: string,
  ) {
    super(401, text, failure === 'session-not-valid' ? 'Session not valid' : 'Unauthorized (session expired or of the wrong type)');
    this.name = 'RegisterAuthError';
  }
}

/** An `application/problem+json` answer (400, 404, 409, 413, 500, 503 ...). */
export class RegisterProblemError extends RegisterApiError {
  constructor(
    readonly problem: ProblemBody,
    text: string,
    /** From `Retry-After` (503), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(problem.status, text, `${problem.status} ${problem.title}: ${problem.detail}`);
    this.name = 'RegisterProblemError';
  }
}

/** The request deadline passed before the answer was complete. */
export class RegisterTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`);
    this.name = 'RegisterTimeoutError';
  }
}

/** Turns a non-success answer into its typed error; the status decides how the body is read. */
export function errorFromResponse(status: number, contentType: string, text: string, retryAfter?: string): RegisterApiError {
  const type = contentType.toLowerCase();
  if (status === 401) {
    if (type.startsWith('text/plain')) return new RegisterAuthError('session-not-valid', text);
    const body = parseJson(text) as { message?: unknown; error?: unknown } | undefined;
    if (body && typeof body.message === 'string' && 'uid' in body) return new RegisterAuthError('unauthorized', text);
    if (body && body.error === 'Session not valid') return new RegisterAuthError('session-not-valid', text);
  }
  if (type.startsWith('application/problem+json')) {
    const problem = problemOf(text);
    if (problem) {
      const seconds = retryAfter !== undefined && /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) * 1000 : undefined;
      return new RegisterProblemError(problem, text, seconds);
    }
  }
  return new RegisterApiError(status, text);
}

function isAbort(err: unknown): boolean {
  const name = (err as { name?: string } | undefined)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

export interface RegisterClientOptions {
  /** `{base_url}`, e.g. `http://localhost:8080/api/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Deadline of an ordinary request, headers and body; default 30 s. */
  requestTimeoutMs?: number;
  /**
   * How often a request is tried again after a 503, a 429, a timeout or a network error (a
   * write with the same Idempotency-Key, so that it is applied once); default 4.
   */
  retries?: number;
  /**
   * First wait before a retry, doubling up to `retryCapMs`; `Retry-After` wins when sent, up to
   * `retryCapMs`: an answer that says "not for a long while" (a full quota of kept answers) ends
   * the retries with its error.
   */
  retryBaseMs?: number;
  retryCapMs?: number;
  /** How to wait before a retry; injectable so tests can assert the delays, not wall time. */
  sleep?(ms: number): Promise<void>;
}

/** Whether an error leaves the request worth trying again, and after how long at least. */
function retryableWait(err: unknown): { afterMs?: number } | undefined {
  if (err instanceof RegisterProblemError) {
    const { status, title } = err.problem;
    // 409 here means "your first attempt is still being processed", not a state conflict.
    if (status === 503 || status === 429 || (status === 409 && title === PROBLEM_KINDS.idempotencyKeyOutstanding.title)) return { afterMs: err.retryAfterMs };
    return undefined;
  }
  if (err instanceof RegisterApiError) return err.status >= 500 ? {} : undefined;
  if (isAbort(err)) return undefined; // the caller cancelled
  return {}; // a timeout or a network error: the outcome is unknown
}

/** The stream position: the last order and command numbers processed. */
export type { StreamCursor };

export type DisconnectReason =
  /** The server ended the response (e.g. its emitter timeout). */
  | 'ended'
  /** Nothing arrived for `watchdogMs`. */
  | 'watchdog'
  /** The connection failed or was cut. */
  | 'network'
  /** The server answered the connect with a retryable status (5xx, 408, 429). */
  | 'http-status'
  /** A handler threw; the stream restarts from the last processed cursor. */
  | 'handler-error';

export type StreamState =
  | { state: 'connecting'; cursor?: StreamCursor }
  | { state: 'open' }
  | { state: 'disconnected'; reason: DisconnectReason; error?: Error }
  /**
   * Waiting `delayMs` before the next attempt: a random part of `ceilingMs` (full jitter), which
   * doubles with every failure up to the cap; `attempt` counts failures since the last healthy connection.
   */
  | { state: 'backoff'; delayMs: number; ceilingMs: number; attempt: number }
  | { state: 'closed'; error?: Error };

export interface StreamHandlers {
  /** An order changed state (or was replayed on connect); react to `order.state`. */
  onOrder?(order: OrderRecord): void | Promise<void>;
  /** A new command (or one replayed on connect). */
  onCommand?(command: CommandRecord): void | Promise<void>;
  /** The location's work, polled after each reconnect (spec part 6, rule 2). */
  onPoll?(work: WorkRecord[]): void | Promise<void>;
  /** Connection life cycle, for logs and tests. */
  onState?(state: StreamState): void;
  /** Errors that did not end the consumer (a failed poll, a bad event, a throwing handler). */
  onError?(error: Error): void;
}

export interface StreamOptions {
  /** Start after this cursor (a register that kept its position across restarts). */
  from?: StreamCursor;
  /** Reconnect when no byte arrives for this long; default 60 s. */
  watchdogMs?: number;
  /**
   * First reconnect delay's ceiling; default 1 s, replaced by the server's `retry:` when it sends
   * one. Each delay is drawn from 0 to its ceiling (full jitter), so that a fleet cut off together
   * does not reconnect in lockstep.
   */
  backoffBaseMs?: number;
  /** Largest reconnect delay's ceiling; default 60 s. */
  backoffCapMs?: number;
  /** Use the server's `retry:` as the base delay; default true. */
  honourServerRetry?: boolean;
  /** How to wait between attempts; injectable so tests can assert the delays, not wall time. */
  sleep?(ms: number, signal: AbortSignal): Promise<void>;
}

export interface WorkStream {
  /** The last processed position, sent on every reconnect. */
  readonly cursor: StreamCursor | undefined;
  /** Ends the stream for good; resolves once the consumer has stopped. */
  close(): Promise<void>;
  /**
   * Settles when the consumer stops: resolves after close(), rejects with the error that made
   * reconnecting pointless (a 401 of either shape, or another 4xx on connect).
   */
  readonly done: Promise<void>;
}

export class RegisterClient {
  readonly baseUrl: string;
  private readonly apiKey: string;
  readonly requestTimeoutMs: number;
  private readonly retries: number;
  private readonly retryBaseMs: number;
  private readonly retryCapMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: RegisterClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    this.retries = options.retries ?? DEFAULT_REQUEST_RETRIES;
    this.retryBaseMs = options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;
    this.retryCapMs = options.retryCapMs ?? DEFAULT_RETRY_CAP_MS;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** GET /orders/location: PLACED orders by number, then live commands by number. */
  listWork(signal?: AbortSignal): Promise<WorkRecord[]> {
    return this.withRetries(() => this.request('GET', '/orders/location', undefined, signal));
  }

  /** PUT /orders/{n}/statusupdate: the updated order. */
  updateStatus(orderNumber: number, newState: OrderState): Promise<OrderRecord> {
    return this.write('PUT', `/orders/${orderNumber}/statusupdate`, { newState });
  }

  /** POST /orders/{n}/failure: the order, back in PLACED below the threshold, FAILED at it. */
  reportFailure(orderNumber: number, reason?: string): Promise<OrderRecord> {
    return this.write('POST', `/orders/${orderNumber}/failure`, reason === undefined ? {} : { reason });
  }

  /** DELETE /commands/{n}: the acknowledged command. */
  acknowledgeCommand(commandNumber: number): Promise<CommandRecord> {
    return this.write('DELETE', `/commands/${commandNumber}`);
  }

  /** Consumes the event stream until closed, reconnecting as the spec suggests. */
  openStream(handlers: StreamHandlers, options: StreamOptions = {}): WorkStream {
    return new StreamConsumer(this, handlers, options);
  }

  /** @internal the stream consumer's request. */
  streamRequest(cursor: StreamCursor | undefined, signal: AbortSignal): Promise<Response> {
    return fetch(`${this.baseUrl}/notifications/service/stream${cursorQuery(cursor)}`, {
      headers: { api_key: this.apiKey, accept: 'text/event-stream', 'cache-control': 'no-cache' },
      signal,
    });
  }

  /** A write, with a fresh Idempotency-Key that its retries reuse: applied once, however often sent. */
  private write<T>(method: string, path: string, body?: unknown): Promise<T> {
    const key = randomUUID();
    return this.withRetries(() => this.request<T>(method, path, body, undefined, key));
  }

  /** Tries `attempt` again while its failure is retryable (see retryableWait), up to `retries` times. */
  private async withRetries<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tried = 0; ; tried++) {
      try {
        return await attempt();
      } catch (err) {
        const wait = retryableWait(err);
        if (!wait || tried >= this.retries || (wait.afterMs ?? 0) > this.retryCapMs) throw err;
        await this.sleep(wait.afterMs ?? Math.min(this.retryCapMs, this.retryBaseMs * 2 ** tried));
      }
    }
  }

  private async request<T>(method: string, path: string, body?: unknown, cancel?: AbortSignal, idempotencyKey?: string): Promise<T> {
    const deadline = AbortSignal.timeout(this.requestTimeoutMs);
    const signal = cancel ? AbortSignal.any([deadline, cancel]) : deadline;
    let status: number;
    let contentType: string;
    let retryAfter: string | undefined;
    let text: string;
    try {
      const response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          api_key: this.apiKey,
          ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      status = response.status;
      contentType = response.headers.get('content-type') ?? '';
      retryAfter = response.headers.get('retry-after') ?? undefined;
      text = await response.text();
    } catch (err) {
      if (isAbort(err) && deadline.aborted) throw new RegisterTimeoutError(this.requestTimeoutMs);
      throw err;
    }
    // Branch on the status before parsing: a 401 body may be plain text.
    if (status !== 200) throw errorFromResponse(status, contentType, text, retryAfter);
    return JSON.parse(text) as T;
  }
}

/** Calls `fire` when not re-armed within `ms`. */
class Watchdog {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly fire: () => void,
  ) {
    this.arm();
  }

  arm(): void {
    // refresh() is cheap, and there is one per chunk on every open stream.
    if (this.timer) this.timer.refresh();
    else this.timer = setTimeout(this.fire, this.ms);
  }

  disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Why one connection ended, as the reconnect loop needs it. */
interface Ended {
  reason: DisconnectReason;
  healthy: boolean;
  error?: Error;
  /** Reconnecting cannot help (401, other 4xx). */
  fatal?: RegisterApiError;
}

class StreamConsumer implements WorkStream {
  readonly done: Promise<void>;
  private current: StreamCursor | undefined;
  private readonly stopper = new AbortController();
  private serverRetryMs: number | undefined;
  private readonly watchdogMs: number;
  private readonly baseMs: number;
  private readonly capMs: number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;

  constructor(
    private readonly client: RegisterClient,
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
        const base = this.options.honourServerRetry === false || this.serverRetryMs === undefined ? this.baseMs : this.serverRetryMs;
        const ceilingMs = Math.min(this.capMs, base * 2 ** Math.min(failures, 30));
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
    let healthy = false;

    try {
      this.state({ state: 'connecting', ...(this.current ? { cursor: { ...this.current } } : {}) });
      const response = await this.client.streamRequest(this.current, connection.signal);
      watchdog.arm();
      if (response.status !== 200 || !response.body) {
        const text = await response.text();
        const error = errorFromResponse(response.status, response.headers.get('content-type') ?? '', text, response.headers.get('retry-after') ?? undefined);
        const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
        return { reason: 'http-status', healthy: false, error, ...(retryable ? {} : { fatal: error }) };
      }
      this.state({ state: 'open' });

      const events: { type: string; data: string; id: string }[] = [];
      const parser = new SseParser({
        onEvent: (e) => events.push({ type: e.event, data: e.data, id: e.id }),
        onRetry: (ms) => (this.serverRetryMs = Math.min(this.capMs, Math.max(100, ms))),
        onComment: () => (healthy = true),
      });
      const reader = response.body.getReader();
      if (poll) {
        // The stream is open, so nothing published from here on is missed; the poll catches
        // what changed while disconnected and the replay does not cover.
        watchdog.disarm();
        const fatal = await this.poll();
        if (fatal) {
          await reader.cancel().catch(() => undefined);
          return { reason: 'http-status', healthy, error: fatal, fatal };
        }
        watchdog.arm();
      }
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        watchdog.arm();
        parser.feed(value);
        for (const event of events.splice(0)) {
          healthy = true;
          try {
            await this.deliver(event.type, event.data);
          } catch (err) {
            this.report(err as Error);
            await reader.cancel().catch(() => undefined);
            return { reason: 'handler-error', healthy, error: err as Error };
          }
          const next = parseEventId(event.id);
          if (next) this.current = furthest(this.current, next);
        }
      }
      return { reason: 'ended', healthy };
    } catch (err) {
      return { reason: watchdogFired ? 'watchdog' : 'network', healthy, ...(this.stopped ? {} : { error: err as Error }) };
    } finally {
      watchdog.disarm();
      this.stopper.signal.removeEventListener('abort', stop);
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
  private async poll(): Promise<RegisterAuthError | undefined> {
    let work: WorkRecord[];
    try {
      work = await this.client.listWork(this.stopper.signal);
    } catch (err) {
      if (err instanceof RegisterAuthError) return err;
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
