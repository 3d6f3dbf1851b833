/**
 * Headers on every answer: nosniff, no-store (answers carry keys and order data), and frame
 * protection; on the event stream too.
 */
import { adminHeader, call, sampleRows } from '../support/http';
import { TestStream } from '../support/sse-client';
import { startStack } from '../support/stack';

describe('security headers', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let locationId: string;
  let apiKey: string;
  const admin = () => (adminHeader(stack.env));

  beforeAll(async () => {
    stack = await startStack();
    locationId = (await stack.admin.createLocation('Headers')).id;
  });
  afterAll(() => stack?.close());

  const expectHeaders = (headers: Headers, what: string) => {
    expect(`${what}: ${headers.get('x-content-type-options')}`).toBe(`${what}: nosniff`);
    expect(`${what}: ${headers.get('cache-control')}`).toBe(`${what}: no-store`);
    expect(`${what}: ${headers.get('x-frame-options')}`).toBe(`${what}: DENY`);
    expect(`${what}: ${headers.get('content-security-policy')}`).toBe(`${what}: frame-ancestors 'none'`);
  };

  it('on the answer that carries a new key', async () => {
    const issued = await call('POST', `${stack.origin}/admin/v1/locations/${locationId}/service-sessions`, { headers: admin(), body: { deviceId: 'reg' } });
    expect(issued.status).toBe(201);
    expect(issued.json().apiKey).toMatch(/^pos_/);
    expectHeaders(issued.headers, 'key issued');
    apiKey = issued.json().apiKey;
  });

  it('on order data, problems, both 401s, 404s, health and metrics', async () => {
    const order = await stack.admin.createOrder(locationId, sampleRows);
    const answers: [string, Promise<Awaited<ReturnType<typeof call>>>][] = [
      ['work list', call('GET', `${stack.baseUrl}/orders/location`, { apiKey })],
      ['status update', call('PUT', `${stack.baseUrl}/orders/${order.number}/statusupdate`, { apiKey, body: { newState: 'COMPLETED' } })],
      ['admin order list', call('GET', `${stack.origin}/admin/v1/locations/${locationId}/orders?state=COMPLETED`, { headers: admin() })],
      ['problem', call('PUT', `${stack.baseUrl}/orders/x/statusupdate`, { apiKey, body: {} })],
      ['text/plain 401', call('GET', `${stack.baseUrl}/orders/location`, { apiKey: 'nope' })],
      ['admin 401', call('GET', `${stack.origin}/admin/v1/locations/${locationId}`)],
      ['404', call('GET', `${stack.origin}/nowhere`)],
      ['healthz', call('GET', `${stack.origin}/healthz`)],
      ['metrics', call('GET', `${stack.origin}/metrics`)],
    ];
    for (const [what, answer] of answers) expectHeaders((await answer).headers, what);
  });

  it('on the event stream', async () => {
    const stream = await TestStream.open(`${stack.baseUrl}/notifications/service/stream`, { apiKey });
    try {
      expect(stream.status).toBe(200);
      const headers = new Headers(Object.entries(stream.headers).map(([name, value]) => [name, String(value)] as [string, string]));
      expectHeaders(headers, 'stream');
    } finally {
      stream.close();
    }
  });
});
