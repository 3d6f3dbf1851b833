/**
 * Problem details (RFC 7807), the one error body of the service. Titles are the interface's.
 */

export const TITLES = {
  illegalArgument: 'Illegal argument',
  validation: 'Validation error',
  constraint: 'Constraint violation',
  database: 'Something went wrong during database operation.',
  internal: 'Internal server error',
  notFound: 'Not found',
  conflict: 'Conflict',
  unauthorized: 'Unauthorized',
  payloadTooLarge: 'Payload too large',
  tooManyRequests: 'Too many requests',
  unavailable: 'Service unavailable',
  // The titles of the IETF draft "The Idempotency-Key HTTP Header Field".
  idempotencyKeyReused: 'Idempotency-Key is already used',
  idempotencyKeyOutstanding: 'A request is outstanding for this Idempotency-Key',
} as const;

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
}

/** A problem without its request: what domain code and workers produce. */
export interface Problem {
  status: number;
  title: string;
  detail: string;
}

export function problemBody(problem: Problem, instance: string): ProblemBody {
  return { type: 'about:blank', title: problem.title, status: problem.status, detail: problem.detail, instance };
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

export const problems = {
  orderNotFound: (): Problem => ({ status: 400, title: TITLES.illegalArgument, detail: 'Order does not exist' }),
  commandNotFound: (): Problem => ({ status: 404, title: TITLES.notFound, detail: 'Command does not exist' }),
  noEnumConstant: (value: string): Problem => ({
    status: 400,
    title: TITLES.illegalArgument,
    // The value is the caller's: echoed only when it is a plain, short word.
    detail: `No enum constant OrderState.${/^[A-Za-z0-9_-]{0,32}$/.test(value) ? value : '(not a state name)'}`,
  }),
  required: (label: string): Problem => ({ status: 400, title: TITLES.illegalArgument, detail: `${label} is required.` }),
  illegalArgument: (detail: string): Problem => ({ status: 400, title: TITLES.illegalArgument, detail }),
  validation: (detail: string): Problem => ({ status: 400, title: TITLES.validation, detail }),
  conflict: (detail: string): Problem => ({ status: 409, title: TITLES.conflict, detail }),
  concurrentModification: (): Problem => ({
    status: 409,
    title: TITLES.conflict,
    detail: 'Order was modified concurrently; read it again and retry',
  }),
  notFound: (detail: string): Problem => ({ status: 404, title: TITLES.notFound, detail }),
  unavailable: (detail: string): Problem => ({ status: 503, title: TITLES.unavailable, detail }),
  /** A bound was reached; thrown by `limitReached` with its Retry-After. */
  tooManyRequests: (detail: string): Problem => ({ status: 429, title: TITLES.tooManyRequests, detail }),
  unauthorized: (detail: string): Problem => ({ status: 401, title: TITLES.unauthorized, detail }),
  payloadTooLarge: (limit: number): Problem => ({
    status: 413,
    title: TITLES.payloadTooLarge,
    detail: `Request body is larger than ${limit} bytes`,
  }),
  idempotencyKeyReused: (): Problem => ({
    status: 422,
    title: TITLES.idempotencyKeyReused,
    detail: 'This Idempotency-Key was used for a different request (method, path or body); use a new key for a new request',
  }),
  idempotencyKeyOutstanding: (): Problem => ({
    status: 409,
    title: TITLES.idempotencyKeyOutstanding,
    detail: 'The first request with this Idempotency-Key is still being processed; retry it shortly for its answer',
  }),
  internal: (errorId: string): Problem => ({
    status: 500,
    title: TITLES.internal,
    detail: `${errorId}: An unexpected error occurred`,
  }),
};

/** The 429 of a bound that was reached, with the seconds (at least 1) after which to try again. */
export function limitReached(detail: string, retryAfterSeconds: number): ProblemError {
  return new ProblemError(problems.tooManyRequests(detail), { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
}
