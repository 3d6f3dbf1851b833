/**
 * A small SSE test client over node:http: one connection per stream (no agent), the raw text
 * kept for byte assertions, events, comments and `retry:` parsed as they arrive.
 */
import http from 'node:http';
import { SseParser } from '@pos/shared/clients/sse-parser';
import { isServiceUrl, observe } from './contract';
import { EVENTUALLY_MS } from './wait';

/** The register's event stream, from the origin. */
export const streamPath = '/api/v1/notifications/service/stream';

export interface ReceivedEvent {
  event: string;
  id: string;
  data: string;
  json<T = any>(): T;
}

export interface StreamOptions {
  apiKey?: string;
  headers?: Record<string, string>;
}

export class TestStream {
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  /** Everything received, as text. */
  raw = '';
  events: ReceivedEvent[] = [];
  comments: string[] = [];
  retries: number[] = [];
  /** True once the server ended the response or the connection closed. */
  isEnded = false;
  /** True when the response ended in order (the server closed it), not by a reset or an abort. */
  endedCleanly = false;
  readonly ended: Promise<void>;
  private markEnded!: () => void;
  /** The service's own parser (shared with the register client). */
  private readonly parser = new SseParser({
    onEvent: ({ event, id, data }) => this.events.push({ event, id, data, json: () => JSON.parse(data) }),
    onComment: (text) => this.comments.push(text),
    onRetry: (ms) => this.retries.push(ms),
  });
  private request: http.ClientRequest | undefined;
  private response: http.IncomingMessage | undefined;
  private readonly waiters = new Set<() => void>();

  constructor() {
    this.ended = new Promise((resolve) => (this.markEnded = resolve));
  }

  /** Resolves with the stream once the response head has arrived. */
  static open(url: string, options: StreamOptions = {}): Promise<TestStream> {
    return TestStream.start(url, options).opened;
  }

  /** Sends the request; the stream is there at once (to close it early), `opened` once the head arrives. */
  static start(url: string, options: StreamOptions = {}): { stream: TestStream; opened: Promise<TestStream> } {
    const stream = new TestStream();
    const headers: Record<string, string> = { accept: 'text/event-stream', ...(options.headers ?? {}) };
    if (options.apiKey !== undefined) headers.api_key = options.apiKey;
    const opened = new Promise<TestStream>((resolve, reject) => {
      const request = http.get(url, { headers, agent: false }, (response) => {
        stream.response = response;
        stream.status = response.statusCode ?? 0;
        stream.headers = response.headers;
        // the service's answer is held against the OpenAPI document as it arrives
        const contract = isServiceUrl(new URL(url))
          ? observe({
              method: 'GET',
              url: new URL(url),
              status: stream.status,
              header: (name) => {
                const value = response.headers[name.toLowerCase()];
                return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
              },
            })
          : undefined;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          contract?.chunk(chunk);
          stream.receive(chunk);
        });
        response.on('end', () => contract?.end());
        response.on('end', () => {
          stream.endedCleanly = true;
          stream.finish();
        });
        response.on('close', () => stream.finish());
        response.on('error', () => stream.finish());
        resolve(stream);
      });
      stream.request = request;
      request.on('error', (err) => {
        stream.finish();
        reject(err);
      });
    });
    return { stream, opened };
  }

  /** Waits until the condition holds (checked on every chunk), or fails naming what was awaited. */
  waitFor(condition: () => boolean, what: string, timeoutMs = EVENTUALLY_MS): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (condition()) {
          done();
          resolve();
        } else if (this.isEnded) {
          done();
          reject(new Error(`stream ended while waiting for ${what}; received:\n${this.raw}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; received:\n${this.raw}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }

  /** Waits for the `retry:` line the service opens every stream with. */
  async preamble(timeoutMs = EVENTUALLY_MS): Promise<void> {
    await this.waitFor(() => /^retry: \d+\n\n/.test(this.raw), 'the preamble', timeoutMs);
  }

  /** Waits until `count` events have arrived in all, and returns them all. */
  async eventCount(count: number, timeoutMs = EVENTUALLY_MS): Promise<ReceivedEvent[]> {
    await this.waitFor(() => this.events.length >= count, `${count} events`, timeoutMs);
    return this.events;
  }

  /** Waits for the server to end the stream. */
  async end(timeoutMs = EVENTUALLY_MS): Promise<void> {
    await this.waitFor(() => this.isEnded, 'the end of the stream', timeoutMs).catch((err: Error) => {
      if (!this.isEnded) throw err;
    });
  }

  /** The last event id received ('' before any), as an EventSource would send it back. */
  get lastEventId(): string {
    return this.events.at(-1)?.id ?? '';
  }

  /** Drops the connection, as a client that vanishes does. */
  close(): void {
    this.request?.destroy();
    this.response?.destroy();
  }

  private receive(chunk: string): void {
    this.raw += chunk;
    this.parser.feed(chunk);
    this.notify();
  }

  private finish(): void {
    if (this.isEnded) return;
    this.isEnded = true;
    this.markEnded();
    this.notify();
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }
}
