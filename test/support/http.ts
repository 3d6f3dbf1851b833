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
}

export async function call(method: string, url: string, options: CallOptions = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.apiKey !== undefined) headers.api_key = options.apiKey;
  let body: string | undefined;
  if (typeof options.body === 'string') body = options.body;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const started = Date.now();
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: () => JSON.parse(text),
    ms: Date.now() - started,
  };
}

/** The rows tests order with: the one definition the benchmark uses too. */
export { SAMPLE_ROWS as sampleRows } from '../../scripts/embedded/sample-rows';
