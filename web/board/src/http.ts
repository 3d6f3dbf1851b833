/**
 * The board's requests: JSON over fetch with the secret in a header (never in a URL), a
 * deadline, an Idempotency-Key on every write, and retries of what may not have happened (a
 * network error, a 503, a 429, a key still outstanding), with the same key.
 */
import { doubling } from '@pos/shared/util/doubling-pause';

/** A 401 of any shape: the key or token is not (or no longer) good. The board signs out. */
export class AuthError extends Error {
  override readonly name = 'AuthError';
}

/** Any other answer that is not a success: a problem's detail, or the status. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Answer<T> {
  body: T;
  /** The `Link: <…>; rel="next"` target of a paged list, when the server pages it. */
  next?: string;
}

const DEADLINE_MS = 15_000;
const RETRIES = 3;
const RETRY_BASE_MS = 500;

/**
 * A random UUID (v4) for Idempotency-Key. `crypto.randomUUID` exists only in secure contexts,
 * and a tablet may open the board over plain http on the restaurant's network.
 */
export function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function nextLink(header: string | null): string | undefined {
  const match = header && /<([^>]+)>\s*;\s*rel="?next"?/.exec(header);
  return match ? match[1] : undefined;
}

/** What to tell the user of an answer that is not a success. */
async function failure(response: Response): Promise<Error> {
  const text = await response.text().catch(() => '');
  if (response.status === 401) {
    // `{"error":"Session not valid"}` (text/plain),
    // `{"message":"Unauthorized","uid":null}`, or the admin API's problem
    return new AuthError(
      response.headers.get('content-type')?.includes('problem') ? 'The token was refused' : 'The key was refused',
    );
  }
  try {
    const problem = JSON.parse(text) as { title?: string; detail?: string };
    if (problem.detail) return new RequestError(response.status, problem.detail);
  } catch {
    // not JSON: the status says it
  }
  return new RequestError(response.status, `The service answered ${response.status}`);
}

function retryable(status: number): boolean {
  return status === 503 || status === 429 || status === 409 || status === 408 || status === 502 || status === 504;
}

export async function request<T>(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer<T>> {
  const write = method !== 'GET';
  const sent: Record<string, string> = { accept: 'application/json', ...headers };
  if (write) sent['idempotency-key'] = randomKey();
  if (body !== undefined) sent['content-type'] = 'application/json';
  for (let attempt = 0; ; attempt += 1) {
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: sent,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
        signal: AbortSignal.timeout(DEADLINE_MS),
      });
    } catch {
      if (attempt >= RETRIES) throw new RequestError(0, 'The service cannot be reached');
      await pause(doubling(attempt + 1, [RETRY_BASE_MS, Infinity]));
      continue;
    }
    if (response.ok) {
      const text = await response.text();
      return { body: (text === '' ? undefined : JSON.parse(text)) as T, next: nextLink(response.headers.get('link')) };
    }
    // A 409 is retried only when it is the Idempotency-Key's "outstanding", not a state conflict.
    const outstanding = response.status !== 409 || (await response.clone().text()).includes('outstanding');
    if (attempt < RETRIES && retryable(response.status) && outstanding) {
      const after = Number(response.headers.get('retry-after'));
      await pause(
        Number.isFinite(after) && after > 0
          ? Math.min(after, 10) * 1000
          : doubling(attempt + 1, [RETRY_BASE_MS, Infinity]),
      );
      continue;
    }
    throw await failure(response);
  }
}

/** Every page of a list the server may page (it says so with `Link: rel="next"`). */
export async function requestAll<T>(url: string, headers: Record<string, string>): Promise<T[]> {
  const items: T[] = [];
  for (let next: string | undefined = url; next !== undefined;) {
    const answer: Answer<T[]> = await request<T[]>('GET', next, headers);
    items.push(...answer.body);
    next = answer.next === undefined ? undefined : new URL(answer.next, location.href).href;
  }
  return items;
}
