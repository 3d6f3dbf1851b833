/**
 * Jest setup (every test file): holds every answer of the service against the OpenAPI document.
 * fetch is wrapped for the service's origins (the test stacks, spawned API nodes, the demo): plain bodies
 * are read from a clone, event streams as the caller reads them (so a stream is never held open
 * by the check). The SSE test client (sse-client.ts) reports its streams itself.
 */
import { isServiceUrl, observe, takeViolations, track } from './contract';

const realFetch = globalThis.fetch;

function requestOf(input: Parameters<typeof fetch>[0], init?: RequestInit): { url: URL; method: string } {
  const request = input instanceof Request ? input : undefined;
  const url = new URL(request ? request.url : input instanceof URL ? input.href : String(input));
  return { url, method: (init?.method ?? request?.method ?? 'GET').toUpperCase() };
}

globalThis.fetch = async function contractFetch(input, init) {
  const response = await realFetch(input, init);
  const { url, method } = requestOf(input, init);
  if (!isServiceUrl(url)) return response;
  const check = observe({ method, url, status: response.status, header: (name) => response.headers.get(name) });
  if (!response.body) {
    check.end();
    return response;
  }
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    // The caller's stream, read through the check: cancelling it still cancels the response.
    const decoder = new TextDecoder();
    const seen = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        check.chunk(decoder.decode(chunk, { stream: true }));
        controller.enqueue(chunk);
      },
      flush() {
        check.end();
      },
    });
    return new Response(response.body.pipeThrough(seen), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
  track(
    response
      .clone()
      .text()
      .then((text) => {
        check.chunk(text);
        check.end();
      }),
  );
  return response;
};

async function failOnViolations(): Promise<void> {
  const violations = await takeViolations();
  if (violations.length > 0)
    throw new Error(`responses the OpenAPI document does not describe:\n${violations.join('\n')}`);
}

afterEach(failOnViolations);
afterAll(failOnViolations);
