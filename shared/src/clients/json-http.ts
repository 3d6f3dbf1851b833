/** The JSON-over-HTTP call the admin and customer clients share. */
import type { ProblemBody } from '../domain/problem';

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

function problemOf(text: string): ProblemBody | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<ProblemBody>;
    return typeof parsed.title === 'string' ? (parsed as ProblemBody) : undefined;
  } catch {
    return undefined;
  }
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
