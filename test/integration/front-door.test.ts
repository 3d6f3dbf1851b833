/**
 * The operator surfaces (admin API, Bull Board, /metrics) cannot be reached through the
 * register-facing door by any spelling of their paths: with ADMIN_PORT they are not on PORT at
 * all; on one listener, routes match case-sensitively (what a gateway blocks is what is served).
 */
import { expectNoOperatorContent, keyIssuingPaths, OPERATOR_GETS } from '../support/front-door';
import { adminHeader, rawCall } from '../support/http';
import { useStack } from '../support/stack';

describe('the front door with ADMIN_PORT: operator surfaces on their own listener', () => {
  const stack = useStack({ ADMIN_PORT: '0' });
  let token: Record<string, string>;
  let locationId: string;

  beforeAll(async () => {
    token = adminHeader(stack.env);
    locationId = (await stack.admin.createLocation('Front door')).id;
  });

  it('listens twice', () => {
    expect(stack.api.adminPort).toBeGreaterThan(0);
    expect(stack.operatorOrigin).not.toBe(stack.origin);
  });

  it('answers no spelling of /metrics or Bull Board on PORT, token or not', async () => {
    for (const path of OPERATOR_GETS) {
      const res = await rawCall(stack.origin, 'GET', path, { headers: token });
      expect(`${path} ${res.status}`).toBe(`${path} 404`);
      expectNoOperatorContent(res.text, path);
    }
  });

  it('issues no key on PORT by any spelling of the admin route', async () => {
    for (const path of keyIssuingPaths(locationId)) {
      const res = await rawCall(stack.origin, 'POST', path, { headers: token, body: { deviceId: 'intruder' } });
      expect(`${path} ${res.status}`).toBe(`${path} 404`);
      expectNoOperatorContent(res.text, path);
    }
  });

  it('serves the operator surfaces on ADMIN_PORT, and the register interface only on PORT', async () => {
    const metrics = await rawCall(stack.operatorOrigin, 'GET', '/metrics', { headers: token });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('pos_http_requests_total');
    const board = await rawCall(stack.operatorOrigin, 'GET', '/admin/queues', { headers: token });
    expect(board.status).toBe(200);
    const issued = await rawCall(stack.operatorOrigin, 'POST', `/admin/v1/locations/${locationId}/service-sessions`, {
      headers: token,
      body: { deviceId: 'register-1' },
    });
    expect(issued.status).toBe(201);
    const apiKey = issued.json<{ apiKey: string }>().apiKey;

    expect((await rawCall(stack.origin, 'GET', '/api/v1/orders/location', { apiKey })).status).toBe(200);
    expect((await rawCall(stack.operatorOrigin, 'GET', '/api/v1/orders/location', { apiKey })).status).toBe(404);
    for (const origin of [stack.origin, stack.operatorOrigin]) {
      expect((await rawCall(origin, 'GET', '/healthz')).status).toBe(200);
      expect((await rawCall(origin, 'GET', '/readyz')).status).toBe(200);
    }
  });
});

describe('the front door on one listener (no ADMIN_PORT): routes match case-sensitively', () => {
  const stack = useStack();
  let token: Record<string, string>;
  let locationId: string;

  beforeAll(async () => {
    token = adminHeader(stack.env);
    locationId = (await stack.admin.createLocation('One listener')).id;
  });

  it('serves only the exact spelling of /metrics and Bull Board', async () => {
    const served = new Set(['/metrics', '/metrics/', '/admin/queues', '/admin/queues/api/queues']);
    for (const path of OPERATOR_GETS) {
      const res = await rawCall(stack.origin, 'GET', path, { headers: token });
      if (served.has(path)) expect(`${path} ${res.status}`).toBe(`${path} 200`);
      else {
        expect(`${path} ${res.status}`).toBe(`${path} 404`);
        expectNoOperatorContent(res.text, path);
      }
    }
  });

  it('issues a key on the exact admin route only', async () => {
    const [exact, ...others] = keyIssuingPaths(locationId);
    for (const path of others) {
      const res = await rawCall(stack.origin, 'POST', path, { headers: token, body: { deviceId: 'intruder' } });
      expect(`${path} ${res.status}`).toBe(`${path} 404`);
      expectNoOperatorContent(res.text, path);
    }
    expect(
      (await rawCall(stack.origin, 'POST', exact!, { headers: token, body: { deviceId: 'register-1' } })).status,
    ).toBe(201);
  });

  it('matches the register interface case-sensitively too', async () => {
    const { apiKey } = await stack.admin.createServiceSession(locationId, 'register-2');
    expect((await rawCall(stack.origin, 'GET', '/api/v1/orders/location', { apiKey })).status).toBe(200);
    expect((await rawCall(stack.origin, 'GET', '/API/V1/orders/location', { apiKey })).status).toBe(404);
    expect((await rawCall(stack.origin, 'GET', '/api/v1/Orders/Location', { apiKey })).status).toBe(404);
  });
});
