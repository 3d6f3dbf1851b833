/**
 * The reference register client of the service interface (parts 4 to 8): lists work, reports
 * outcomes, acknowledges commands and consumes the event stream with the client-side behaviour
 * the spec suggests (30 s request deadline, 60 s stream watchdog, 1-2-4-8 s backoff capped at
 * 60 s, with full jitter, reconnect with the cursor, then poll). Used by the demo, the benchmark
 * and the tests. Its parts are in register/ (client, options, stream consumer, watchdog); its
 * errors are those of every typed client (errors.ts), under the names this client always gave them.
 */
export { RegisterClient } from './register/client';
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
} from './register/options';
export type { StreamCursor } from '../events/stream-cursor';
export {
  type AuthFailure,
  errorFromResponse,
  ApiError as RegisterApiError,
  ApiAuthError as RegisterAuthError,
  ApiProblemError as RegisterProblemError,
  RequestTimeoutError as RegisterTimeoutError,
} from './errors';
