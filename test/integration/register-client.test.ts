/**
 * The reference register client: its typed errors against the real service, and its stream
 * consumer (reconnect with the cursor, poll, backoff, watchdog) against a small real SSE server
 * whose behaviour each test scripts connection by connection.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  RegisterApiError,
  RegisterAuthError,
  RegisterClient,
  RegisterProblemError,
  RegisterTimeoutError,
  StreamState,
  WorkStream,
} from '@pos/shared/clients/register/client';
import type { CommandRecord, OrderRecord, WorkRecord } from '@pos/shared/domain/records';
import { expiredSession } from '../support/fixtures';
import { sampleRows } from '../support/http';
import { metricValue } from '../support/metrics';
import { startStack, useStack } from '../support/stack';
import { eventually, pause } from '../support/wait';

const order = (number: number, state = 'PLACED'): OrderRecord =>
  ({
    number,
    state,
    rows: [{ rowNumber: 1, productId: 'p', name: 'Burger', quantity: 1, unitPrice: 100 }],
    guestCount: 1,
  }) as OrderRecord;
const command = (number: number): CommandRecord => ({ number, state: 'PLACED', readTableState: true });
const sse = (type: string, id: string, record: unknown) =>
  `event: ${type}\nid: ${id}\ndata: ${JSON.stringify(record)}\n\n`;

/** What the fake service saw, in arrival order: `stream?<query>` or `poll`. */
interface FakeService {
  baseUrl: string;
  seen: string[];
  /** Resolves when the n-th stream request (1-based) has arrived. */
  streamRequest(n: number): Promise<void>;
  close(): Promise<void>;
}

type StreamScript = (res: http.ServerResponse, req: http.IncomingMessage) => void;

async function fakeService(scripts: StreamScript[], work: WorkRecord[] = [], hangPolls = false): Promise<FakeService> {
  const seen: string[] = [];
  const waiters: { n: number; resolve(): void }[] = [];
  let streams = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/api/v1/notifications/service/stream') {
      streams += 1;
      seen.push(`stream?${url.searchParams}`);
      const script = scripts[Math.min(streams, scripts.length) - 1]!;
      script(res, req);
      for (const w of waiters.filter((w) => w.n <= streams)) w.resolve();
      return;
    }
    if (url.pathname === '/api/v1/orders/location') {
      seen.push('poll');
      if (hangPolls) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(work));
      return;
    }
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    seen,
    streamRequest: (n) => (streams >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const openSse = (res: http.ServerResponse, first = '') => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(first);
};
const unavailable: StreamScript = (res) =>
  res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' }).end(
    JSON.stringify({
      type: 'about:blank',
      title: 'Service unavailable',
      status: 503,
      detail: 'down',
      instance: '/x',
    }),
  );
/** Open with a keepalive (a healthy connection) and hold. */
const holdOpen: StreamScript = (res) => openSse(res, ': keepalive\n\n');

/** Records the backoff delays and returns at once, so tests assert the sequence, not wall time. */
function recordingSleep() {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}

/** The ceilings of the backoffs reported; each delay slept (full jitter) lies within its ceiling. */
function ceilingsOf(states: StreamState[], delays: number[]): number[] {
  const backoffs = states.flatMap((s) => (s.state === 'backoff' ? [s] : []));
  expect(backoffs.map((b) => b.delayMs)).toEqual(delays);
  for (const { delayMs, ceilingMs } of backoffs) {
    expect(Number.isInteger(delayMs)).toBe(true);
    expect(delayMs).toBeGreaterThanOrEqual(0);
    expect(delayMs).toBeLessThanOrEqual(ceilingMs);
  }
  return backoffs.map((b) => b.ceilingMs);
}

describe('register client stream consumer (real HTTP SSE server)', () => {
  let fake: FakeService | undefined;
  let stream: WorkStream | undefined;
  afterEach(async () => {
    await stream?.close();
    await fake?.close();
    stream = undefined;
    fake = undefined;
  });

  it('reconnects with the cursor after a dropped or ended stream, then polls', async () => {
    fake = await fakeService(
      [
        // the fake's scripts: streams that live 100 ms, then drop or end
        (res) => {
          openSse(res, `retry: 250\n\n${sse('order', '1.0', order(1))}${sse('command', '1.2', command(2))}`);
          setTimeout(() => res.destroy(), 100);
        },
        (res) => {
          openSse(res, sse('order', '3.2', order(3)));
          setTimeout(() => res.end(), 100);
        },
        holdOpen,
      ],
      [order(1), command(2)],
    );
    const client = new RegisterClient({ baseUrl: fake.baseUrl, apiKey: 'k' });
    const orders: number[] = [];
    const commands: number[] = [];
    const polls: WorkRecord[][] = [];
    const states: StreamState[] = [];
    const { delays, sleep } = recordingSleep();
    stream = client.openStream(
      {
        onOrder: (o) => void orders.push(o.number),
        onCommand: (c) => void commands.push(c.number),
        onPoll: (work) => void polls.push(work),
        onState: (s) => void states.push(s),
      },
      { sleep },
    );
    await fake.streamRequest(3);
    await eventually(() => polls.length === 2, 'two polls');

    expect(fake.seen).toEqual([
      'stream?',
      'stream?orderNumber=1&commandNumber=2',
      'poll',
      'stream?orderNumber=3&commandNumber=2',
      'poll',
    ]);
    expect(orders).toEqual([1, 3]);
    expect(commands).toEqual([2]);
    expect(polls[0]).toEqual([order(1), command(2)]);
    expect(stream.cursor).toEqual({ orderNumber: 3, commandNumber: 2 });
    const reasons = states.flatMap((s) => (s.state === 'disconnected' ? [s.reason] : []));
    expect(reasons).toEqual(['network', 'ended']);
    // Healthy connections reset the backoff; the server's retry: replaces the base delay.
    expect(ceilingsOf(states, delays)).toEqual([250, 250]);
  });

  it('backs off 1, 2, 4 ... times the base up to the cap, with full jitter, and starts over after a healthy connection', async () => {
    const healthyThenEnd: StreamScript = (res) => {
      openSse(res, ': keepalive\n\n');
      setTimeout(() => res.end(), 50);
    };
    fake = await fakeService([
      unavailable,
      unavailable,
      unavailable,
      unavailable,
      unavailable,
      healthyThenEnd,
      unavailable,
      unavailable,
      holdOpen,
    ]);
    const client = new RegisterClient({ baseUrl: fake.baseUrl, apiKey: 'k' });
    const { delays, sleep } = recordingSleep();
    const errors: Error[] = [];
    const states: StreamState[] = [];
    stream = client.openStream(
      { onError: (e) => void errors.push(e), onState: (s) => void states.push(s) },
      { backoffBaseMs: 100, backoffCapMs: 500, sleep },
    );
    await fake.streamRequest(9);
    await eventually(() => fake!.seen.filter((s) => s === 'poll').length === 2, 'two polls');
    expect(ceilingsOf(states, delays)).toEqual([100, 200, 400, 500, 500, 100, 200, 400]);
    // each a random part of its ceiling: the same failures do not give the same waits
    expect(new Set(delays).size).toBeGreaterThan(1);
    const first = states.find((s) => s.state === 'disconnected');
    expect(first).toMatchObject({ state: 'disconnected', reason: 'http-status' });
    expect((first as { error?: Error }).error).toBeInstanceOf(RegisterProblemError);
    expect(((first as { error?: RegisterProblemError }).error as RegisterProblemError).retryAfterMs).toBe(1000);
    // Only reconnections that opened are followed by a poll.
    expect(fake.seen.filter((s) => s === 'poll')).toHaveLength(2);
  });

  it('reconnects when the watchdog sees no bytes for its period, before and after the headers', async () => {
    fake = await fakeService([
      () => undefined, // never answers
      (res) => openSse(res), // headers, then silence
      holdOpen,
    ]);
    const client = new RegisterClient({ baseUrl: fake.baseUrl, apiKey: 'k' });
    const states: StreamState[] = [];
    const { sleep } = recordingSleep();
    stream = client.openStream({ onState: (s) => void states.push(s) }, { watchdogMs: 300, sleep });
    await fake.streamRequest(3);
    const reasons = states.flatMap((s) => (s.state === 'disconnected' ? [s.reason] : []));
    expect(reasons).toEqual(['watchdog', 'watchdog']);
  });

  it('stops for good on a 401 from the stream, with the typed error', async () => {
    fake = await fakeService([
      (res) => res.writeHead(401, { 'content-type': 'text/plain' }).end('{"error":"Session not valid"}'),
    ]);
    const client = new RegisterClient({ baseUrl: fake.baseUrl, apiKey: 'k' });
    const { delays, sleep } = recordingSleep();
    stream = client.openStream({}, { sleep });
    const error = await stream.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RegisterAuthError);
    expect((error as RegisterAuthError).failure).toBe('session-not-valid');
    expect(delays).toEqual([]);
    expect(fake.seen).toEqual(['stream?']);
  });

  it('gives up on a request after its deadline', async () => {
    fake = await fakeService([holdOpen], [], true);
    const client = new RegisterClient({ baseUrl: fake.baseUrl, apiKey: 'k', requestTimeoutMs: 200 });
    await expect(client.listWork()).rejects.toBeInstanceOf(RegisterTimeoutError);
  });
});

describe('register client against the service', () => {
  const stack = useStack();

  async function register() {
    const loc = await stack.admin.createLocation('Client');
    const session = await stack.admin.createServiceSession(loc.id, 'reg-1');
    return { loc, client: new RegisterClient({ baseUrl: stack.baseUrl, apiKey: session.apiKey }) };
  }

  it('lists work, updates status, reports failures and acknowledges commands', async () => {
    const { loc, client } = await register();
    const first = await stack.admin.createOrder(loc.id, sampleRows, 4);
    const second = await stack.admin.createOrder(loc.id, sampleRows);
    const cmd = await stack.admin.createCommand(loc.id, 'REQUEST_BILL', 4);
    expect(await client.listWork()).toEqual([first, second, cmd]);
    const done = await client.updateStatus(first.number, 'COMPLETED');
    expect(done).toMatchObject({ number: first.number, state: 'COMPLETED' });
    expect(done.completeTime).toEqual(expect.any(String));
    const failed = await client.reportFailure(second.number, 'printer jam');
    expect(failed).toMatchObject({ number: second.number, state: 'PLACED' });
    expect(await client.acknowledgeCommand(cmd.number)).toEqual(cmd);
    expect(await client.listWork()).toEqual([expect.objectContaining({ number: second.number })]);
  });

  it('raises problem errors with the problem body', async () => {
    const { client } = await register();
    const missing = await client.updateStatus(999, 'COMPLETED').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(RegisterProblemError);
    expect((missing as RegisterProblemError).problem).toMatchObject({
      status: 400,
      title: 'Illegal argument',
      detail: 'Order does not exist',
    });
    const noCommand = await client.acknowledgeCommand(999).catch((e: unknown) => e);
    expect(noCommand).toBeInstanceOf(RegisterProblemError);
    expect((noCommand as RegisterProblemError).status).toBe(404);
  });

  it('tells the text 401 (unknown key) from the JSON 401 (wrong type, expired)', async () => {
    const loc = await stack.admin.createLocation('Auth');
    const customer = await stack.admin.createCustomerSession(loc.id, 7);
    const expired = await expiredSession(stack, loc.id, 'reg-old');
    const failureOf = async (apiKey: string) => {
      const error = await new RegisterClient({ baseUrl: stack.baseUrl, apiKey }).listWork().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RegisterAuthError);
      expect(error).toBeInstanceOf(RegisterApiError);
      expect((error as RegisterAuthError).status).toBe(401);
      return (error as RegisterAuthError).failure;
    };
    const [unknown, wrongType, old] = await Promise.all([
      failureOf('no-such-key'),
      failureOf(customer.apiKey),
      failureOf(expired.apiKey),
    ]);
    expect(unknown).toBe('session-not-valid');
    expect(wrongType).toBe('unauthorized');
    expect(old).toBe('unauthorized');
  });
});

describe('register client at its quota of kept answers', () => {
  const stack = useStack({ IDEMPOTENCY_MAX_RECORDS: '2' });

  it('does not sleep out a Retry-After beyond its cap: the 429 is the caller\u2019s at once', async () => {
    const loc = await stack.admin.createLocation('Quota');
    const session = await stack.admin.createServiceSession(loc.id, 'reg-quota');
    const order = await stack.admin.createOrder(loc.id, sampleRows);
    const { delays, sleep } = recordingSleep();
    const client = new RegisterClient({ baseUrl: stack.baseUrl, apiKey: session.apiKey, sleep });
    await client.reportFailure(order.number);
    await client.reportFailure(order.number);
    const refused = await client.reportFailure(order.number).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RegisterProblemError);
    expect((refused as RegisterProblemError).problem).toMatchObject({ status: 429, title: 'Too many requests' });
    expect(delays).toEqual([]);
  });
});

describe('register client against a service that sheds load', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    // no worker, and room for one job in flight: every other register write is refused at once
    stack = await startStack(
      { QUEUE_ADMISSION_FLOOR: '1', QUEUE_WAIT_TARGET: '100ms', JOB_TIMEOUT: '4s' },
      { worker: false },
    );
  });
  afterAll(() => stack.close());

  it('waits out Retry-After with full jitter on top, and retries at most its budget: about a tenth more requests, not four times as many', async () => {
    const loc = await stack.admin.createLocation('Shedding');
    const session = await stack.admin.createServiceSession(loc.id, 'reg-shed');
    const orders = [];
    for (let i = 0; i < 41; i++) orders.push(await stack.admin.createOrder(loc.id, sampleRows));
    // one write holds the partition's one place (it waits for a worker that never comes)
    const holder = new RegisterClient({ baseUrl: stack.baseUrl, apiKey: session.apiKey, retries: 0 })
      .updateStatus(orders[0]!.number, 'COMPLETED')
      .catch(() => undefined);
    await eventually(() => stack.api.deps.admission.signals()[0]!.inFlight === 1, 'the one job in flight');
    // once it has waited QUEUE_WAIT_TARGET, the queue is seen not to move: the wait is what is tested
    await pause(200);

    const { delays, sleep } = recordingSleep();
    const client = new RegisterClient({ baseUrl: stack.baseUrl, apiKey: session.apiKey, sleep, random: () => 0.5 });
    const route = '/api/v1/orders/:number/failure';
    const shedBefore = await metricValue(stack.origin, 'pos_requests_shed_total', { reason: 'queue', route });
    const failures: unknown[] = [];
    for (const order of orders.slice(1))
      failures.push(await client.reportFailure(order.number).catch((err: unknown) => err));
    expect(failures.every((err) => err instanceof RegisterProblemError && err.status === 503)).toBe(true);
    const sent = (await metricValue(stack.origin, 'pos_requests_shed_total', { reason: 'queue', route })) - shedBefore;
    // 40 requests: two retries a window, and a tenth of the requests (4): 46
    // at most, where four retries each would be 200
    expect(sent - 40).toBe(delays.length);
    expect(delays.length).toBeLessThanOrEqual(6);
    expect(delays.length).toBeGreaterThanOrEqual(2);
    // each wait: the answer's Retry-After (1 s), then half (random 0.5) of a ceiling doubling from 500 ms
    for (const delay of delays) expect([1_250, 1_500, 2_000, 3_000]).toContain(delay);
    await holder;
  });
});

describe('register client stream consumer against the service', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let stream: WorkStream | undefined;
  beforeAll(async () => {
    // The server ends every stream after a second, so the client must reconnect.
    stack = await startStack({ SSE_TIMEOUT: '1s' });
  });
  afterEach(async () => {
    await stream?.close();
    stream = undefined;
  });
  afterAll(() => stack.close());

  it('reconnects with the cursor after the server ends the stream, polls, and gets new work live', async () => {
    const loc = await stack.admin.createLocation('Stream');
    const key = (await stack.admin.createServiceSession(loc.id, 'reg-1')).apiKey;
    const first = await stack.admin.createOrder(loc.id, sampleRows);
    const cmd = await stack.admin.createCommand(loc.id, 'READ_TABLE_STATE');
    const orders: OrderRecord[] = [];
    const commands: CommandRecord[] = [];
    const polls: WorkRecord[][] = [];
    const states: StreamState[] = [];
    const { delays, sleep } = recordingSleep();
    stream = new RegisterClient({ baseUrl: stack.baseUrl, apiKey: key }).openStream(
      {
        onOrder: (o) => void orders.push(o),
        onCommand: (c) => void commands.push(c),
        onPoll: (work) => void polls.push(work),
        onState: (s) => void states.push(s),
      },
      { sleep },
    );
    await eventually(() => polls.length >= 1, 'the poll after the reconnection');
    // Replayed on the first connection; polled after the reconnection.
    expect(orders[0]).toEqual(first);
    expect(commands).toEqual([cmd]);
    expect(polls[0]).toEqual([first, cmd]);
    const connects = states.flatMap((s) => (s.state === 'connecting' ? [s.cursor] : []));
    expect(connects[0]).toBeUndefined();
    expect(connects[1]).toEqual({ orderNumber: first.number, commandNumber: cmd.number });
    expect(states).toContainEqual({ state: 'disconnected', reason: 'ended' });
    // The server's retry: (a random part of 1000, at least 100 to the client) is the base delay.
    const [base] = ceilingsOf(states, delays);
    expect(base).toBeGreaterThanOrEqual(100);
    expect(base).toBeLessThanOrEqual(1000);

    const second = await stack.admin.createOrder(loc.id, sampleRows);
    await eventually(() => orders.some((o) => o.number === second.number), 'the second order streamed');
    await eventually(() => stream!.cursor?.orderNumber === second.number, 'the cursor past the second order');
    // The first order was replayed once, not again on the reconnections (the cursor is past it).
    expect(orders.filter((o) => o.number === first.number)).toHaveLength(1);
  });

  it('ends with the typed 401 when the key is unknown, or revoked while streaming', async () => {
    const loc = await stack.admin.createLocation('Stream auth');
    const unknown = new RegisterClient({ baseUrl: stack.baseUrl, apiKey: 'no-such-key' }).openStream({});
    const error = await unknown.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegisterAuthError);
    expect((error as RegisterAuthError).failure).toBe('session-not-valid');

    const session = await stack.admin.createServiceSession(loc.id, 'reg-2');
    const { sleep } = recordingSleep();
    let open = false;
    stream = new RegisterClient({ baseUrl: stack.baseUrl, apiKey: session.apiKey }).openStream(
      { onState: (s) => void (s.state === 'open' && (open = true)) },
      { sleep },
    );
    await eventually(() => open, 'the stream open');
    await stack.admin.closeSession(session.sessionId);
    const revoked = await stream.done.catch((e: unknown) => e);
    expect(revoked).toBeInstanceOf(RegisterAuthError);
    expect((revoked as RegisterAuthError).failure).toBe('session-not-valid');
  });
});
