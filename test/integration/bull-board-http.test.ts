import { call } from '../support/http';
import { startStack } from '../support/stack';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('Bull Board over HTTP', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let bearer: Record<string, string>;
  beforeAll(async () => {
    stack = await startStack();
    bearer = { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` };
  });
  afterAll(() => stack.close());

  it('refuses the page without the admin token, asking the browser for Basic credentials', async () => {
    for (const path of ['/admin/queues', '/admin/queues/', '/admin/queues/api/queues', '/admin/queues/static/favicon.ico']) {
      const res = await call('GET', `${stack.origin}${path}`);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="pos-admin"');
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 401, title: 'Unauthorized', instance: path });
    }
  });

  it('refuses a wrong token, as bearer and as Basic password', async () => {
    for (const authorization of ['Bearer wrong-token-wrong-token', basic('admin', 'wrong-token'), basic(stack.env.ADMIN_TOKEN!, ''), 'Basic !!!']) {
      const res = await call('GET', `${stack.origin}/admin/queues`, { headers: { authorization } });
      expect(res.status).toBe(401);
    }
  });

  it('serves the page with its base path to a bearer token and to Basic with any user name', async () => {
    for (const authorization of [bearer.authorization!, basic('admin', stack.env.ADMIN_TOKEN!), basic('', stack.env.ADMIN_TOKEN!)]) {
      for (const path of ['/admin/queues', '/admin/queues/', '/admin/queues/queue/order-work']) {
        const res = await call('GET', `${stack.origin}${path}`, { headers: { authorization } });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
        expect(res.text).toContain('<base href="/admin/queues/"');
      }
    }
  });

  it('serves the static assets the page names', async () => {
    const page = await call('GET', `${stack.origin}/admin/queues`, { headers: bearer });
    const assets = [...page.text.matchAll(/(?:src|href)="(static\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const res = await call('GET', `${stack.origin}/admin/queues/${asset}`, { headers: bearer });
      expect(`${asset} ${res.status}`).toBe(`${asset} 200`);
      expect(res.headers.get('content-type')).not.toMatch(/problem/);
    }
  });

  it('answers the board API with the work and lifecycle queues, untouched by the problem middleware', async () => {
    const res = await call('GET', `${stack.origin}/admin/queues/api/queues?activeQueue=order-work&status=latest&page=1&jobsPerPage=10`, {
      headers: bearer,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const names = (res.json().queues as { name: string }[]).map((q) => q.name);
    expect(names).toEqual(['order-work', 'order-lifecycle']);

    // The board's own "not found" answers keep the board's body.
    const missing = await call('GET', `${stack.origin}/admin/queues/api/queues/no-such-queue/some-job`, { headers: bearer });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).not.toMatch(/problem/);
  });

  it('answers unknown sub-paths and methods with problems, and leaves neighbouring paths alone', async () => {
    const unknown = await call('GET', `${stack.origin}/admin/queues/no/such/page`, { headers: bearer });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(unknown.json()).toMatchObject({ status: 404, title: 'Not found', instance: '/admin/queues/no/such/page' });

    const missingAsset = await call('GET', `${stack.origin}/admin/queues/static/js/nothing.js`, { headers: bearer });
    expect(missingAsset.status).toBe(404);
    expect(missingAsset.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    const wrongMethod = await call('POST', `${stack.origin}/admin/queues/`, { headers: bearer });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    // Not under the board: no Basic challenge, the usual 404.
    const neighbour = await call('GET', `${stack.origin}/admin/queuesx`);
    expect(neighbour.status).toBe(404);
    expect(neighbour.headers.get('www-authenticate')).toBeNull();
  });
});
