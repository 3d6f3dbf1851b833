/**
 * The errors of every typed client (admin, customer, register): one family, so that a caller
 * catches `ApiError` for any answer that was not a success and branches on a subclass only where
 * it acts differently (a 401's key is no good; a problem body says what went wrong).
 */
import type { ProblemBody } from '../domain/problem';

/**
 * Any answer other than the expected success: its status, its body as received, and its problem body when it was one.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** The response body as received. */
    readonly text: string,
    readonly problem?: ProblemBody,
    message = `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** An `application/problem+json` answer (400, 404, 409, 413, 429, 500, 503 ...). */
export class ApiProblemError extends ApiError {
  declare readonly problem: ProblemBody;

  constructor(
    problem: ProblemBody,
    text: string,
    /** From `Retry-After` (503, 429), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(problem.status, text, problem, `${problem.status} ${problem.title}: ${problem.detail}`);
    this.name = 'ApiProblemError';
  }
}

/**
 * The two 401s of part 5: `session-not-valid` is the text/plain `{"error":"Session not valid"}`
 * (unknown, empty or revoked key), `unauthorized` the JSON `{"message":"Unauthorized","uid":null}`
 * (expired session or a key of the wrong type). Either way the key is no good; retrying is useless.
 */
export type AuthFailure = 'session-not-valid' | 'unauthorized';

/** A 401 of the api_key authentication, in either of its shapes. */
export class ApiAuthError extends ApiError {
  constructor(
    readonly failure: AuthFailure,
    text: string,
  ) {
    super(
      401,
      text,
      undefined,
      failure === 'session-not-valid' ? 'Session not valid' : 'Unauthorized (session expired or of the wrong type)',
    );
    this.name = 'ApiAuthError';
  }
}

/** The request deadline passed before the answer was complete: its outcome is unknown. */
export class RequestTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}

/** Nothing answered at the address (refused, unknown host, reset): the request was not processed there. */
export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    /** Why: the network error's code (`ECONNREFUSED`, `ENOTFOUND`...), or its message. */
    readonly reason: string | undefined,
  ) {
    super(`could not reach ${new URL(url).origin}${reason ? ` (${reason})` : ''}`);
    this.name = 'UnreachableError';
  }
}

/** Why a fetch failed before any answer (undici's `fetch failed` and its cause), or undefined for any other error. */
export function networkFailure(err: unknown): { reason: string | undefined } | undefined {
  if (!(err instanceof TypeError) || err.message !== 'fetch failed') return undefined;
  const cause = (err as { cause?: { code?: unknown; message?: unknown; errors?: { code?: unknown }[] } }).cause;
  const reason = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message;
  return { reason: typeof reason === 'string' ? reason : undefined };
}

/** The parsed JSON of an answer's body, or undefined when it is not JSON (a 401 may be plain text). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The problem body in `text`, or undefined when it is not one. */
export function problemOf(text: string): ProblemBody | undefined {
  const parsed = parseJson(text) as Partial<ProblemBody> | null | undefined;
  return parsed && typeof parsed.title === 'string' && typeof parsed.status === 'number'
    ? (parsed as ProblemBody)
    : undefined;
}

/** Turns a non-success answer into its error; the status decides how the body is read. */
export function errorFromResponse(status: number, contentType: string, text: string, retryAfter?: string): ApiError {
  const type = contentType.toLowerCase();
  if (status === 401) {
    if (type.startsWith('text/plain')) return new ApiAuthError('session-not-valid', text);
    const body = parseJson(text) as { message?: unknown; error?: unknown } | undefined;
    if (body && typeof body.message === 'string' && 'uid' in body) return new ApiAuthError('unauthorized', text);
    if (body && body.error === 'Session not valid') return new ApiAuthError('session-not-valid', text);
  }
  const problem = type.startsWith('application/problem+json') ? problemOf(text) : undefined;
  if (problem) {
    const retryAfterMs =
      retryAfter !== undefined && /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) * 1000 : undefined;
    return new ApiProblemError(problem, text, retryAfterMs);
  }
  return new ApiError(status, text);
}

/** The error of a request that was aborted: by the caller's signal or a deadline's. */
export function isAbort(err: unknown): boolean {
  const name = (err as { name?: string } | undefined)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}
