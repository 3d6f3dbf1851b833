/**
 * The contract check itself (test/support/contract.ts) must fail what it exists to fail: a
 * loopback server answers as a broken service would, through fetch and the SSE test client.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serviceAt, takeViolations } from '../support/contract';
import { TestStream } from '../support/sse-client';

type Answer = { status: number; headers?: Record<string, string>; body?: string };

const ORDER = {
  number: 1,
  state: 'PLACED',
  rows: [{ rowNumber: 1, productId: 'p', name: 'n', quantity: 1, unitPrice: 1 }],
  guestCount: 1,
};

describe('the contract check', () => {
  let server: http.Server;
  let origin: string;
  const answers = new Map<string, Answer>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const answer = answers.get(`${req.method} ${req.url}`) ?? { status: 500, body: 'no answer set' };
      res.writeHead(answer.status, { 'x-request-id': 'r1', ...answer.headers });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    serviceAt(origin); // as if it were the service
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const json = (status: number, body: unknown, type = 'application/json; charset=utf-8'): Answer => ({
    status,
    headers: { 'content-type': type },
    body: JSON.stringify(body),
  });
  const problem = (status: number, title: string) =>
    json(status, { type: 'about:blank', title, status, detail: 'd', instance: '/x' }, 'application/problem+json');

  async function violationsOf(method: string, path: string, answer: Answer): Promise<string[]> {
    answers.set(`${method} ${path}`, answer);
    const response = await fetch(`${origin}${path}`, { method });
    await response.text();
    return takeViolations();
  }

  it('passes what the document describes', async () => {
    expect(
      await violationsOf(
        'GET',
        '/api/v1/orders/location',
        json(200, [ORDER, { number: 2, state: 'PLACED', paymentNumber: 1 }]),
      ),
    ).toEqual([]);
    expect(await violationsOf('PUT', '/api/v1/orders/1/statusupdate', problem(409, 'Conflict'))).toEqual([]);
    expect(
      await violationsOf('GET', '/api/v1/orders/location', {
        status: 401,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: '{"error":"Session not valid"}',
      }),
    ).toEqual([]);
    expect(await violationsOf('GET', '/nowhere', problem(404, 'Not found'))).toEqual([]);
    expect(
      await violationsOf('DELETE', '/healthz', {
        ...problem(405, 'Method not allowed'),
        headers: { 'content-type': 'application/problem+json', allow: 'HEAD, GET' },
      }),
    ).toEqual([]);
  });

  it('fails a body that does not match its schema', async () => {
    const [violation] = await violationsOf('GET', '/api/v1/orders/location', json(200, [{ ...ORDER, state: 'EATEN' }]));
    expect(violation).toMatch(/GET \/api\/v1\/orders\/location → 200: body does not match the schema/);
    expect(
      await violationsOf('GET', '/api/v1/orders/location', json(200, [{ ...ORDER, tableNumber: null }])),
    ).toHaveLength(1);
  });

  it('fails an undocumented status, a wrong title for the status, a wrong 401 body', async () => {
    expect((await violationsOf('GET', '/healthz', json(418, {})))[0]).toMatch(/status 418 is not among the documented/);
    expect((await violationsOf('PUT', '/api/v1/orders/1/statusupdate', problem(409, 'Illegal argument')))[0]).toMatch(
      /body does not match/,
    );
    const wrong401 = { status: 401, headers: { 'content-type': 'text/plain' }, body: '{"error":"Nope"}' };
    expect((await violationsOf('GET', '/api/v1/orders/location', wrong401))[0]).toMatch(/body does not match/);
  });

  it('fails an undocumented content type and a missing required header', async () => {
    expect(
      (
        await violationsOf('GET', '/healthz', { status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' })
      )[0],
    ).toMatch(/content type "text\/plain" is not among/);
    answers.set('GET /readyz', problem(503, 'Service unavailable'));
    await (await fetch(`${origin}/readyz`)).text();
    expect(await takeViolations()).toEqual([
      expect.stringMatching(/header Retry-After is documented as required but absent/),
    ]);
  });

  it('fails an unknown path that does not answer 404, and a 405 whose Allow disagrees', async () => {
    expect((await violationsOf('GET', '/api/v1/secret', json(200, {})))[0]).toMatch(/undocumented path answered 200/);
    const allow = {
      ...problem(405, 'Method not allowed'),
      headers: { 'content-type': 'application/problem+json', allow: 'GET, POST' },
    };
    expect((await violationsOf('DELETE', '/healthz', allow))[0]).toMatch(/Allow is "GET, POST"/);
  });

  it('fails a stream event the document does not describe, or whose data is not its record', async () => {
    const stream = (events: string) => ({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: `retry: 1000\n\n${events}`,
    });
    answers.set(
      'GET /api/v1/notifications/service/stream',
      stream(`id: 1.0\nevent: order\ndata: ${JSON.stringify(ORDER)}\n\n`),
    );
    const good = await TestStream.open(`${origin}/api/v1/notifications/service/stream`);
    await good.end();
    expect(await takeViolations()).toEqual([]);

    answers.set(
      'GET /api/v1/notifications/service/stream',
      stream(`id: 1.0\nevent: bill\ndata: {}\n\nid: 1.0\nevent: order\ndata: {"number":1}\n\n`),
    );
    const bad = await TestStream.open(`${origin}/api/v1/notifications/service/stream`);
    await bad.end();
    expect(await takeViolations()).toEqual([
      expect.stringMatching(/event "bill" is not documented/),
      expect.stringMatching(/event "order" data does not match its record/),
    ]);
  });
});
