/**
 * TRUST_PROXY: X-Forwarded-For is believed only when the operator says a proxy stands in
 * front, and then only its own hop (the last address), which a client cannot forge.
 */
import { call } from '../support/http';
import { ChildRole, spawnRole, stackEnv } from '../support/stack';
import { eventually } from '../support/wait';

describe.each([
  ['off (the default)', {}, '127.0.0.1'],
  ['on', { TRUST_PROXY: '1' }, '203.0.113.7'],
] as const)('TRUST_PROXY %s', (_name, overrides, expectedIp) => {
  let api: ChildRole & { port?: number };
  beforeAll(async () => {
    api = await spawnRole('api', stackEnv(overrides));
  });
  afterAll(() => api?.stop());

  it('logs the caller as the address it can vouch for', async () => {
    const requestId = `trust-${Date.now()}`;
    // a client's forged address first, then the one the proxy appended
    const res = await call('GET', `http://127.0.0.1:${api.port}/healthz`, {
      headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.7', 'x-request-id': requestId },
    });
    expect(res.status).toBe(200);
    await eventually(() => api.output().includes(`"claimedRequestId":"${requestId}"`), 'the access line');
    const line = api
      .output()
      .split('\n')
      .find((l) => l.includes(`"claimedRequestId":"${requestId}"`))!;
    expect(JSON.parse(line)).toMatchObject({ msg: 'request', status: 200, ip: expectedIp });
  });
});
