/**
 * Headers on every answer: nosniff, no-store (answers carry keys and order data), and frame
 * protection; on the event stream too.
 */
import { customerAt } from '../support/customer';
import { registerAt } from '../support/fixtures';
import { adminHeader, call, HttpResult, sampleRows } from '../support/http';
import { streamPath, TestStream } from '../support/sse-client';
import { useStack } from '../support/stack';

describe('security headers', () => {
  const stack = useStack();

  const expectHeaders = (headers: Headers, what: string) => {
    expect(`${what}: ${headers.get('x-content-type-options')}`).toBe(`${what}: nosniff`);
    expect(`${what}: ${headers.get('cache-control')}`).toBe(`${what}: no-store`);
    expect(`${what}: ${headers.get('x-frame-options')}`).toBe(`${what}: DENY`);
    expect(`${what}: ${headers.get('content-security-policy')}`).toBe(`${what}: frame-ancestors 'none'`);
  };

  it('on the answer that carries a new key', async () => {
    const { id: locationId } = await stack.admin.createLocation('Headers');
    const issued = await call('POST', `${stack.origin}/admin/v1/locations/${locationId}/service-sessions`, {
      headers: adminHeader(stack.env),
      body: { deviceId: 'reg' },
    });
    expect(issued.status).toBe(201);
    expect(issued.json().apiKey).toMatch(/^pos_/);
    expectHeaders(issued.headers, 'key issued');
  });

  it('on order data, problems, both 401s, 404s, health and metrics', async () => {
    const { locationId, key: apiKey } = await registerAt(stack, 'Headers');
    const customer = await customerAt(stack, locationId, 3);
    const order = await stack.admin.createOrder(locationId, sampleRows);
    // [what, answer, its status: the headers are those of the answer named]
    const answers: [string, Promise<HttpResult>, number][] = [
      ['work list', call('GET', `${stack.baseUrl}/orders/location`, { apiKey }), 200],
      [
        'status update',
        call('PUT', `${stack.baseUrl}/orders/${order.number}/statusupdate`, {
          apiKey,
          body: { newState: 'COMPLETED' },
        }),
        200,
      ],
      [
        'admin order list',
        call('GET', `${stack.origin}/admin/v1/locations/${locationId}/orders?state=COMPLETED`, {
          headers: adminHeader(stack.env),
        }),
        200,
      ],
      ['problem', call('PUT', `${stack.baseUrl}/orders/x/statusupdate`, { apiKey, body: {} }), 400],
      ['text/plain 401', call('GET', `${stack.baseUrl}/orders/location`, { apiKey: 'nope' }), 401],
      ['JSON 401', call('GET', `${stack.baseUrl}/orders/location`, { apiKey: customer.key }), 401],
      ['admin 401', call('GET', `${stack.origin}/admin/v1/locations/${locationId}`), 401],
      ['404', call('GET', `${stack.origin}/nowhere`), 404],
      ['healthz', call('GET', `${stack.origin}/healthz`), 200],
      ['metrics', call('GET', `${stack.origin}/metrics`, { headers: adminHeader(stack.env) }), 200],
    ];
    for (const [what, answer, status] of answers) {
      const res = await answer;
      expect(`${what}: ${res.status}`).toBe(`${what}: ${status}`);
      expectHeaders(res.headers, what);
    }
  });

  it('on the event stream', async () => {
    const { key: apiKey } = await registerAt(stack, 'Headers');
    const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey });
    try {
      expect(stream.status).toBe(200);
      const headers = new Headers(
        Object.entries(stream.headers).map(([name, value]) => [name, String(value)] as [string, string]),
      );
      expectHeaders(headers, 'stream');
    } finally {
      stream.close();
    }
  });
});
