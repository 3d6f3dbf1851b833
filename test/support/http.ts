import http from 'node:http';

/** Plain HTTP over fetch: status, headers and the raw text, so tests assert bytes. */
export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json<T = any>(): T;
  ms: number;
}

export interface CallOptions {
  apiKey?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as it is. */
  body?: unknown;
  /** Gives up (rejects) after this long: a hang fails the test instead of outliving it. */
  timeoutMs?: number;
}

/** The headers and body a call sends: the key in `api_key`, an object body as JSON. */
function requestParts(options: CallOptions): { headers: Record<string, string>; body: string | undefined } {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.apiKey !== undefined) headers.api_key = options.apiKey;
  let body: string | undefined;
  if (typeof options.body === 'string') body = options.body;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  return { headers, body };
}

export async function call(method: string, url: string, options: CallOptions = {}): Promise<HttpResult> {
  const { headers, body } = requestParts(options);
  const started = Date.now();
  const signal = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
  const response = await fetch(url, { method, headers, body, signal });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: () => JSON.parse(text),
    ms: Date.now() - started,
  };
}

/** A register's status update, as sent: `PUT {baseUrl}/orders/{orderNumber}/statusupdate`. */
export function statusUpdate(
  baseUrl: string,
  apiKey: string,
  orderNumber: number,
  newState: string,
): Promise<HttpResult> {
  return call('PUT', `${baseUrl}/orders/${orderNumber}/statusupdate`, { apiKey, body: { newState } });
}

/** The admin API's credentials for a deployment: its ADMIN_TOKEN as a bearer token. */
export function adminHeader(env: { ADMIN_TOKEN?: string }): { authorization: string } {
  return { authorization: `Bearer ${env.ADMIN_TOKEN}` };
}

/** The rows tests order with: the one definition the benchmark uses too. */
export { SAMPLE_ROWS as sampleRows } from '../../scripts/embedded/sample-rows';

/**
 * A request whose path is sent exactly as written (fetch would resolve `..`, and encode or
 * decode parts of it): for the spellings of a path that a front door must treat alike.
 */
export function rawCall(
  origin: string,
  method: string,
  rawPath: string,
  options: CallOptions = {},
): Promise<HttpResult> {
  const { headers, body } = requestParts(options);
  const { hostname, port } = new URL(origin);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const request = http.request({ host: hostname, port, method, path: rawPath, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        resolve({
          status: response.statusCode ?? 0,
          headers: responseHeaders,
          text,
          json: () => JSON.parse(text),
          ms: Date.now() - started,
        });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}
