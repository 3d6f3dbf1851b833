/** The JSON-over-HTTP call the admin and customer clients share, and the request deadline of every client. */
import { errorFromResponse, networkFailure, UnreachableError } from './errors';

/** Deadline of an ordinary request, headers and body (the interface's 30 s: docs/register-interface.md, part 8). */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Sends `body` as JSON (when given; optional fields left undefined are left out, as JSON drops
 * them) and answers the parsed JSON reply, or throws the ApiError of the answer (errors.ts).
 */
export async function requestJson<T>(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  }).catch((err: unknown) => {
    const failure = networkFailure(err);
    throw failure ? new UnreachableError(url, failure.reason) : err;
  });
  const text = await response.text();
  if (!response.ok) {
    throw errorFromResponse(
      response.status,
      response.headers.get('content-type') ?? '',
      text,
      response.headers.get('retry-after') ?? undefined,
    );
  }
  return (text ? JSON.parse(text) : undefined) as T;
}
