/** What a caller gives the register client and its stream consumer, and what the consumer tells it. */
import type { CommandRecord, OrderRecord, WorkRecord } from '../../domain/records';
import type { StreamCursor } from '../../events/stream-cursor';
import type { RetryBudget } from '../retry-budget';

export const DEFAULT_WATCHDOG_MS = 60_000;
export const DEFAULT_BACKOFF_BASE_MS = 1_000;
export const DEFAULT_BACKOFF_CAP_MS = 60_000;
/** Retries of a request whose outcome is unknown or that was turned away for now. */
export const DEFAULT_REQUEST_RETRIES = 4;
export const DEFAULT_RETRY_BASE_MS = 500;
export const DEFAULT_RETRY_CAP_MS = 8_000;

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
   * The ceiling of the random wait before a retry (full jitter), doubling per try up to
   * `retryCapMs`; an answer's `Retry-After` is waited first, and one over `retryCapMs` ("not for a
   * long while": a full quota of kept answers) ends the retries with its error.
   */
  retryBaseMs?: number;
  retryCapMs?: number;
  /**
   * What the retries may add to the requests (default: a tenth of the last 10 s's, and two every
   * 10 s whatever the load); a retry the budget refuses ends the request with its error.
   */
  retryBudget?: RetryBudget;
  /** How to wait before a retry; injectable so tests can assert the delays, not wall time. */
  sleep?(ms: number): Promise<void>;
  /** The random part of each wait, in [0, 1); injectable for tests. */
  random?(): number;
}

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
