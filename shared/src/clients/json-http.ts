/** The JSON-over-HTTP pieces the clients share: the request deadline, error bodies, the call itself. */
import type { ProblemBody } from '../domain/problem';

/** Deadline of an ordinary request, headers and body (the interface's 30 s: docs/register-interface.md, part 8). */
export const REQUEST_TIMEOUT_MS = 30_000;

/** A non-2xx answer, with its problem body when it had one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: ProblemBody | undefined,
    readonly text: string,
  ) {
    super(problem ? `${status} ${problem.title}: ${problem.detail}` : `${status}: ${text}`);
    this.name = 'ApiError';
  }
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
  return parsed && typeof parsed.title === 'string' && typeof parsed.status === 'number' ? (parsed as ProblemBody) : undefined;
}

/**
 * Sends `body` as JSON (when given; optional fields left undefined are left out, as JSON drops
 * them) and answers the parsed JSON reply, or throws ApiError.
 */
export async function requestJson<T>(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) throw new ApiError(response.status, problemOf(text), text);
  return (text ? JSON.parse(text) : undefined) as T;
}
