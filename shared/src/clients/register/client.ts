/**
 * The reference register client of the service interface (parts 4 to 8): lists work, reports
 * outcomes and acknowledges commands, each request with the spec's 30 s deadline and retried
 * (writes under one Idempotency-Key) while its outcome is unknown or it was turned away for now:
 * after `Retry-After` when the answer gives one, with full jitter on top, and only while its retry
 * budget allows (retry-budget.ts), so that a fleet of registers does not turn an overload into a
 * retry storm. Its event stream is consumed by stream-consumer.ts. Used by the demo, the
 * benchmark and the tests; the module to import (options.ts, stream-consumer.ts and watchdog.ts are its parts).
 */
import { randomUUID } from 'node:crypto';
import type { OrderState } from '../../domain/order-state';
import { PROBLEM_KINDS } from '../../domain/problem';
import type { CommandRecord, OrderRecord, WorkRecord } from '../../domain/records';
import { cursorQuery, type StreamCursor } from '../../events/stream-cursor';
import { ApiError, ApiProblemError, errorFromResponse, isAbort, RequestTimeoutError } from '../errors';
import { REQUEST_TIMEOUT_MS } from '../json-http';
import { RetryBudget } from '../retry-budget';
import {
  DEFAULT_REQUEST_RETRIES,
  DEFAULT_RETRY_BASE_MS,
  DEFAULT_RETRY_CAP_MS,
  type RegisterClientOptions,
  type StreamHandlers,
  type StreamOptions,
  type WorkStream,
} from './options';
import { StreamConsumer, type StreamSource } from './stream-consumer';
import { doubling } from '../../util/doubling-pause';

/** Whether an error leaves the request worth trying again, and after how long at least. */
function retryableWait(err: unknown): { afterMs?: number } | undefined {
  if (err instanceof ApiProblemError) {
    const { status, title } = err.problem;
    // 409 here means "your first attempt is still being processed", not a state conflict.
    if (status === 503 || status === 429 || (status === 409 && title === PROBLEM_KINDS.idempotencyKeyOutstanding.title))
      return { afterMs: err.retryAfterMs };
    return undefined;
  }
  if (err instanceof ApiError) return err.status >= 500 ? {} : undefined;
  if (isAbort(err)) return undefined; // the caller cancelled
  return {}; // a timeout or a network error: the outcome is unknown
}

export class RegisterClient implements StreamSource {
  readonly baseUrl: string;
  private readonly apiKey: string;
  readonly requestTimeoutMs: number;
  private readonly retries: number;
  private readonly retryBaseMs: number;
  private readonly retryCapMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  /** Shared by every request of this client (one register). */
  readonly retryBudget: RetryBudget;

  constructor(options: RegisterClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    this.retries = options.retries ?? DEFAULT_REQUEST_RETRIES;
    this.retryBaseMs = options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;
    this.retryCapMs = options.retryCapMs ?? DEFAULT_RETRY_CAP_MS;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.retryBudget = options.retryBudget ?? new RetryBudget();
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

  /**
   * Tries `attempt` again while its failure is retryable (see retryableWait), up to `retries` times
   * and while the retry budget allows. Each wait is the answer's `Retry-After` (or nothing) plus a
   * random part of a ceiling that doubles per try (full jitter), so that clients turned away
   * together do not come back together.
   */
  private async withRetries<T>(attempt: () => Promise<T>): Promise<T> {
    this.retryBudget.deposit();
    for (let tried = 0; ; tried++) {
      try {
        return await attempt();
      } catch (err) {
        const wait = retryableWait(err);
        if (!wait || tried >= this.retries || (wait.afterMs ?? 0) > this.retryCapMs || !this.retryBudget.tryWithdraw())
          throw err;
        const ceiling = doubling(tried + 1, [this.retryBaseMs, this.retryCapMs]);
        await this.sleep(Math.min(this.retryCapMs, (wait.afterMs ?? 0) + this.random() * ceiling));
      }
    }
  }

  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
    cancel?: AbortSignal,
    idempotencyKey?: string,
  ): Promise<T> {
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
      if (isAbort(err) && deadline.aborted) throw new RequestTimeoutError(this.requestTimeoutMs);
      throw err;
    }
    // Branch on the status before parsing: a 401 body may be plain text.
    if (status !== 200) throw errorFromResponse(status, contentType, text, retryAfter);
    return JSON.parse(text) as T;
  }
}

// What a user of the client needs besides the class: its options, stream types and errors (under
// the names this client always gave them; they are those of every typed client, errors.ts).
export {
  DEFAULT_BACKOFF_BASE_MS,
  DEFAULT_BACKOFF_CAP_MS,
  DEFAULT_REQUEST_RETRIES,
  DEFAULT_RETRY_BASE_MS,
  DEFAULT_RETRY_CAP_MS,
  DEFAULT_WATCHDOG_MS,
  type DisconnectReason,
  type RegisterClientOptions,
  type StreamHandlers,
  type StreamOptions,
  type StreamState,
  type WorkStream,
} from './options';
export type { StreamCursor } from '../../events/stream-cursor';
export {
  type AuthFailure,
  errorFromResponse,
  ApiError as RegisterApiError,
  ApiAuthError as RegisterAuthError,
  ApiProblemError as RegisterProblemError,
  RequestTimeoutError as RegisterTimeoutError,
} from '../errors';
