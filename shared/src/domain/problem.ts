/**
 * Problem details (RFC 7807), the one error body of the service. Titles are the interface's.
 */
import type { FromSchema } from 'json-schema-to-ts';

/**
 * Every kind of problem the service answers, with its status: the one table that routes, the
 * worker and the OpenAPI document (which lists the titles each status can carry) read.
 */
export const PROBLEM_KINDS = {
  illegalArgument: { status: 400, title: 'Illegal argument' },
  validation: { status: 400, title: 'Validation error' },
  constraint: { status: 400, title: 'Constraint violation' },
  database: { status: 400, title: 'Something went wrong during database operation.' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  notFound: { status: 404, title: 'Not found' },
  methodNotAllowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  notAccepting: { status: 409, title: 'Location not accepting orders' },
  preconditionFailed: { status: 412, title: 'Precondition failed' },
  payloadTooLarge: { status: 413, title: 'Payload too large' },
  unsupportedMediaType: { status: 415, title: 'Unsupported media type' },
  // The titles of the IETF draft "The Idempotency-Key HTTP Header Field".
  idempotencyKeyReused: { status: 422, title: 'Idempotency-Key is already used' },
  idempotencyKeyOutstanding: { status: 409, title: 'A request is outstanding for this Idempotency-Key' },
  // The menu's (docs/menu.md): each lists its errors in `errors`.
  invalidMenu: { status: 422, title: 'Invalid menu' },
  menuMismatch: { status: 422, title: 'Menu mismatch' },
  tooManyRequests: { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal server error' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const;

export type ProblemKind = keyof typeof PROBLEM_KINDS;

/** The body of every problem answer, as JSON Schema (the OpenAPI document publishes it). */
export const problemBodySchema = {
  type: 'object',
  description: 'Problem details (RFC 7807, part 7.2)',
  additionalProperties: false,
  required: ['type', 'title', 'status', 'detail', 'instance'],
  properties: {
    type: { type: 'string', const: 'about:blank' },
    title: { type: 'string', enum: [...new Set(Object.values(PROBLEM_KINDS).map((kind) => kind.title))] },
    status: { type: 'integer' },
    detail: {
      type: 'string',
      description:
        'Human-readable explanation; for 500, and store errors, it begins with an id that is also in the log',
    },
    instance: { type: 'string', description: 'The request path, without the query string' },
    errors: {
      type: 'array',
      description:
        'Every error, on `Invalid menu` (each `{pointer, detail}`) and `Menu mismatch` (each `{row, productId, code, detail}`) alone',
      items: { type: 'object' },
    },
  },
} as const;

/** `title` is any of the table's titles; which status carries which is PROBLEM_KINDS'. */
export type ProblemBody = Omit<FromSchema<typeof problemBodySchema>, 'title'> & { title: string };

/** A problem without its request: what domain code and workers produce. */
export interface Problem {
  status: number;
  title: string;
  detail: string;
  /** The menu's problems list every error (problemBodySchema). */
  errors?: Record<string, unknown>[];
}

export function problemBody(problem: Problem, instance: string): ProblemBody {
  const body: ProblemBody = {
    type: 'about:blank',
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    instance,
  };
  if (problem.errors) body.errors = problem.errors;
  return body;
}

/** Thrown anywhere in a request; the problem middleware renders it. */
export class ProblemError extends Error {
  readonly problem: Problem;
  readonly headers: Record<string, string>;

  constructor(problem: Problem, headers: Record<string, string> = {}) {
    super(problem.detail);
    this.name = 'ProblemError';
    this.problem = problem;
    this.headers = headers;
  }
}

/** A problem of a kind from the table, with its detail. */
export function problemOf(kind: ProblemKind, detail: string): Problem {
  const { status, title } = PROBLEM_KINDS[kind];
  return { status, title, detail };
}

/** How much of a caller's value a detail echoes. */
const ECHO_LENGTH = 32;
/** An id is echoed whole (ids are at most this long). */
const ID_LENGTH = 64;

/**
 * A caller's value as a detail echoes it: its first ECHO_LENGTH characters (then `...`), each
 * one outside printable ASCII shown as `?`, so that no control character (CR, LF, escape
 * sequences), bidirectional control or lone surrogate reaches a body, a log line or a screen.
 */
function echoed(value: string, length = ECHO_LENGTH): string {
  const shown = value.slice(0, length).replace(/[^\x20-\x7e]/g, '?');
  return value.length > length ? `${shown}...` : shown;
}

export const problems = {
  orderNotFound: (): Problem => problemOf('illegalArgument', 'Order does not exist'),
  commandNotFound: (): Problem => problemOf('notFound', 'Command does not exist'),
  noEnumConstant: (value: string): Problem =>
    problemOf('illegalArgument', `No enum constant OrderState.${echoed(value)}`),
  required: (label: string): Problem => problemOf('illegalArgument', `${label} is required.`),
  illegalArgument: (detail: string): Problem => problemOf('illegalArgument', detail),
  /** The event feed's `after` names no event it holds (docs/webhooks.md#the-event-feed). */
  eventNotKept: (): Problem =>
    problemOf('illegalArgument', '`after` names no event the feed holds: it is unknown, or older than EVENT_RETENTION'),
  unknownEventType: (type: string): Problem => problemOf('illegalArgument', `No event type ${echoed(type)}`),
  validation: (detail: string): Problem => problemOf('validation', detail),
  /** A write's body of another media type than JSON (the admin and customer APIs). */
  bodyNotJson: (type: string): Problem =>
    problemOf(
      'unsupportedMediaType',
      `The body must be JSON (Content-Type: application/json), not ${type === '' ? 'of no type' : echoed(type)}`,
    ),
  conflict: (detail: string): Problem => problemOf('conflict', detail),
  concurrentModification: (): Problem =>
    problemOf('conflict', 'Order was modified concurrently; read it again and retry'),
  notFound: (detail: string): Problem => problemOf('notFound', detail),
  /** A write names a location (a subscription's, an operator's) that does not exist. */
  unknownLocation: (id: string): Problem => problemOf('notFound', `Location ${echoed(id, ID_LENGTH)} does not exist`),
  methodNotAllowed: (method: string, path: string): Problem =>
    problemOf('methodNotAllowed', `${method} is not allowed on ${path}`),
  unavailable: (detail: string): Problem => problemOf('unavailable', detail),
  // What a 503 knows of the write it gives up on (docs/failure-modes.md). Keyed: the request's
  // Idempotency-Key; an earlier attempt with it may have been queued, this one's answer speaks for itself.
  /**
   * The job was never sent to the queue (Redis down, or the request answered first): nothing of it will be applied.
   */
  notQueued: (keyed: boolean): Problem =>
    problemOf(
      'unavailable',
      keyed
        ? 'The transition queue did not answer: the request was not queued and nothing of this ' +
            'attempt will be applied; retry it with the same Idempotency-Key'
        : 'The transition queue did not answer: the request was not queued and nothing of it will be applied; retry it',
    ),
  /**
   * Shed under overload (docs/overload.md): refused before any of it was done, so it is safe to
   * send again as it is, after `Retry-After`. `queued`: a write whose job was not queued.
   */
  overloaded: (what: 'queued' | 'request', retryAfterSeconds: number): Problem =>
    problemOf(
      'unavailable',
      what === 'queued'
        ? 'The service is overloaded: the request was not queued and nothing of ' +
            `it was done; retry it after ${retryAfterSeconds} s`
        : `The service is overloaded: the request was not processed; retry it after ${retryAfterSeconds} s`,
    ),
  /**
   * The job reached a worker past its request's deadline, or too close to it to be answered in
   * time, and the worker did not apply it: nothing of it was done, and a retry runs it afresh.
   */
  notApplied: (keyed: boolean): Problem =>
    problemOf(
      'unavailable',
      keyed
        ? 'The request waited too long for a worker and was not applied: retry it with the same Idempotency-Key'
        : 'The request waited too long for a worker and was not applied: retry it',
    ),
  /** The Idempotency-Key's record could not be claimed, so the request went no further. */
  notProcessed: (): Problem =>
    problemOf(
      'unavailable',
      'The Idempotency-Key store did not answer: the request was not processed and nothing of ' +
        'this attempt will be applied; retry it with the same Idempotency-Key',
    ),
  /**
   * It may have been applied, or may be yet (a job still queued, a write in
   * flight): only a retry with the key, or a read, tells.
   */
  outcomeUnknown: (keyed: boolean, subject = 'what it changes'): Problem =>
    problemOf(
      'unavailable',
      keyed
        ? 'The request was not answered in time and its outcome is unknown: ' +
            'retry it with the same Idempotency-Key to learn it'
        : 'The request was not answered in time and its outcome is unknown: it may ' +
            `still be applied. Read ${subject} before retrying it`,
    ),
  /** A write that MongoDB or Redis did not answer (`storeDetail`: the store error's detail, with its id). */
  storeWriteUnknown: (storeDetail: string): Problem =>
    problemOf(
      'unavailable',
      `${storeDetail}; the outcome is unknown: retry it with the same Idempotency-Key, or read before retrying it`,
    ),
  /** A customer's create or submit at a paused (or, under PAUSE_WHEN_OFFLINE, offline) location. */
  notAccepting: (detail: string): Problem => problemOf('notAccepting', detail),
  /** An `If-Match` that names another version than the current one. */
  preconditionFailed: (detail: string): Problem => problemOf('preconditionFailed', detail),
  invalidMenu: (errors: readonly { pointer: string; detail: string }[]): Problem => ({
    ...problemOf('invalidMenu', `The menu has ${errors.length} error(s); none of it was stored`),
    errors: errors.map((e) => ({ ...e })),
  }),
  menuMismatch: (errors: readonly { row: number; productId: string; code: string; detail: string }[]): Problem => ({
    ...problemOf(
      'menuMismatch',
      `${new Set(errors.map((e) => e.row)).size} row(s) do not fit the menu; nothing was created or changed`,
    ),
    errors: errors.map((e) => ({ ...e })),
  }),
  unauthorized: (detail: string): Problem => problemOf('unauthorized', detail),
  /** An operator's role does not allow this (docs/operators.md). */
  forbidden: (detail: string): Problem => problemOf('forbidden', detail),
  payloadTooLarge: (limit: number): Problem =>
    problemOf('payloadTooLarge', `Request body is larger than ${limit} bytes`),
  /** A bound was reached; thrown by `limitReached` with its Retry-After. */
  tooManyRequests: (detail: string): Problem => problemOf('tooManyRequests', detail),
  idempotencyKeyReused: (): Problem =>
    problemOf(
      'idempotencyKeyReused',
      'This Idempotency-Key was used for a different request (method, path or body); use a new key for a new request',
    ),
  idempotencyKeyOutstanding: (): Problem =>
    problemOf(
      'idempotencyKeyOutstanding',
      'The first request with this Idempotency-Key is still being processed; retry it shortly for its answer',
    ),
  /** A scope (a session, or the admin token) holds IDEMPOTENCY_MAX_(CUSTOMER_)RECORDS; thrown by `limitReached`. */
  idempotencyRecordsExhausted: (max: number, seconds: number): Problem =>
    problemOf(
      'tooManyRequests',
      `This caller already holds ${max} Idempotency-Key answers, the most it may; the oldest expires in ${seconds} s`,
    ),
  internal: (errorId: string): Problem => problemOf('internal', `${errorId}: An unexpected error occurred`),
};

/** The 429 of a bound that was reached, with the seconds (at least 1) after which to try again. */
export function limitReached(detail: string, retryAfterSeconds: number): ProblemError {
  return new ProblemError(problems.tooManyRequests(detail), {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });
}
