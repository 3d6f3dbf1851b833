import { call } from '../support/http';
import { registerAt } from '../support/fixtures';
import { useStack } from '../support/stack';
import { pause } from '../support/wait';

describe('authentication (part 5)', () => {
  const stack = useStack();
  let key: string;
  let url: string;

  beforeAll(async () => {
    ({ key } = await registerAt(stack));
    url = `${stack.baseUrl}/orders/location`;
  });

  const expectSessionNotValid = (res: Awaited<ReturnType<typeof call>>) => {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain\b/);
    expect(res.text).toBe('{"error":"Session not valid"}');
    expect(res.ms).toBeGreaterThanOrEqual(500);
  };
  const expectUnauthorized = (res: Awaited<ReturnType<typeof call>>) => {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(res.text).toBe('{"message":"Unauthorized","uid":null}');
    expect(res.ms).toBeGreaterThanOrEqual(500);
  };

  it('a missing key is the text/plain 401, after the delay', async () => {
    expectSessionNotValid(await call('GET', url));
  });

  it('an empty key is the text/plain 401', async () => {
    expectSessionNotValid(await call('GET', url, { apiKey: '' }));
    expectSessionNotValid(await call('GET', `${url}?api_key=`));
  });

  it('an unknown key is the text/plain 401', async () => {
    expectSessionNotValid(await call('GET', url, { apiKey: 'pos_not-a-real-key' }));
  });

  it('a revoked (closed) session is the text/plain 401', async () => {
    const { key: revoked, sessionId } = await registerAt(stack, 'Revoked');
    expect((await call('GET', url, { apiKey: revoked })).status).toBe(200);
    await stack.admin.closeSession(sessionId);
    expectSessionNotValid(await call('GET', url, { apiKey: revoked }));
  });

  it('an expired session is the JSON 401 with uid null', async () => {
    const location = await stack.admin.createLocation('Expiring');
    const expiresAt = new Date(Date.now() + 1500);
    const session = await stack.admin.createServiceSession(location.id, 'reg', expiresAt.toISOString());
    expect((await call('GET', url, { apiKey: session.apiKey })).status).toBe(200);
    // The clock passing the expiry is what is tested: the key in use is in the node's session
    // cache, where a session moved back in time in MongoDB would not be seen.
    await pause(expiresAt.getTime() - Date.now() + 50);
    expectUnauthorized(await call('GET', url, { apiKey: session.apiKey }));
  });

  it('a CUSTOMER key on a service endpoint is the JSON 401 (wrong session type)', async () => {
    const location = await stack.admin.createLocation('Customers');
    const customer = await stack.admin.createCustomerSession(location.id, 12, 3);
    expectUnauthorized(await call('GET', url, { apiKey: customer.apiKey }));
  });

  it('the header is checked first; the query parameter is used only when the header is absent', async () => {
    expect((await call('GET', `${url}?api_key=pos_wrong`, { apiKey: key })).status).toBe(200);
    expectSessionNotValid(await call('GET', `${url}?api_key=${encodeURIComponent(key)}`, { apiKey: 'pos_wrong' }));
    expectSessionNotValid(await call('GET', `${url}?api_key=${encodeURIComponent(key)}`, { apiKey: '' }));
    expect((await call('GET', `${url}?api_key=${encodeURIComponent(key)}`)).status).toBe(200);
  });

  it('every endpoint is authenticated, before the body is read', async () => {
    expectSessionNotValid(
      await call('PUT', `${stack.baseUrl}/orders/1/statusupdate`, {
        body: '{not json',
        headers: { 'content-type': 'application/json' },
      }),
    );
    expectSessionNotValid(await call('POST', `${stack.baseUrl}/orders/1/failure`, { body: {} }));
    expectSessionNotValid(await call('DELETE', `${stack.baseUrl}/commands/1`));
  });

  it('the delay holds only the rejected request: others are answered meanwhile', async () => {
    const order: string[] = [];
    const rejected = call('GET', url, { apiKey: 'pos_wrong' }).then((r) => order.push(`rejected ${r.status}`));
    const accepted = Promise.all(
      Array.from({ length: 5 }, () =>
        call('GET', url, { apiKey: key }).then((r) => order.push(`accepted ${r.status}`)),
      ),
    );
    await Promise.all([rejected, accepted]);
    expect(order).toEqual([...Array(5).fill('accepted 200'), 'rejected 401']);
  });
});
