import { Job } from 'bullmq';
import Redis from 'ioredis';
import { JOB } from '@pos/shared/queue/jobs';
import { registerAt } from '../support/fixtures';
import { adminHeader, call, sampleRows } from '../support/http';
import { type StartedStack, useStack } from '../support/stack';
import { eventually } from '../support/wait';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('Bull Board over HTTP', () => {
  const stack = useStack();
  let bearer: Record<string, string>;
  beforeAll(async () => {
    bearer = adminHeader(stack.env);
  });

  it('refuses the page without the admin token, asking the browser for Basic credentials', async () => {
    for (const path of [
      '/admin/queues',
      '/admin/queues/',
      '/admin/queues/api/queues',
      '/admin/queues/static/favicon.ico',
    ]) {
      const res = await call('GET', `${stack.origin}${path}`);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="pos-admin"');
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 401, title: 'Unauthorized', instance: path });
    }
  });

  it('refuses a wrong token, as bearer and as Basic password', async () => {
    for (const authorization of [
      'Bearer wrong-token-wrong-token',
      basic('admin', 'wrong-token'),
      basic(stack.env.ADMIN_TOKEN!, ''),
      'Basic !!!',
    ]) {
      const res = await call('GET', `${stack.origin}/admin/queues`, { headers: { authorization } });
      expect(res.status).toBe(401);
    }
  });

  it('serves the page with its base path to a bearer token and to Basic with any user name', async () => {
    for (const authorization of [
      bearer.authorization!,
      basic('admin', stack.env.ADMIN_TOKEN!),
      basic('', stack.env.ADMIN_TOKEN!),
    ]) {
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

  it('answers the board API with the work, lifecycle, deadline and webhook delivery queues, untouched by the problem middleware', async () => {
    const res = await call(
      'GET',
      `${stack.origin}/admin/queues/api/queues?activeQueue=order-work&status=latest&page=1&jobsPerPage=10`,
      {
        headers: bearer,
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const names = (res.json().queues as { name: string }[]).map((q) => q.name);
    expect(names).toEqual(['order-work', 'order-lifecycle', 'order-deadlines', 'snooze-ends', 'webhook-delivery']);

    // The board's own "not found" answers keep the board's body.
    const missing = await call('GET', `${stack.origin}/admin/queues/api/queues/no-such-queue/some-job`, {
      headers: bearer,
    });
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

/** A job that would abort order 1 of a location, as a form on another site would post it. */
const formJob = (locationId: string) =>
  `name=order-action&data[scope][locationId]=${locationId}&data[orderNumber]=1&data[action][kind]=status&data[action][newState]=ABORTED`;
const ADD_PATH = '/admin/queues/api/queues/order-work/add';

/** The transition queues' jobs in every state a job can be in here. */
const allJobs = (stack: StartedStack) =>
  stack.api.deps.queues.jobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed');

describe('Bull Board hardening', () => {
  describe('read-only by default', () => {
    const stack = useStack();

    it('refuses a cross-site form post that would add a job (HTTP Basic, which a browser resends by itself)', async () => {
      const { id: locationId } = await stack.admin.createLocation('Board CSRF');
      const order = await stack.admin.createOrder(locationId, [
        { productId: 'p', name: 'Soup', quantity: 1, unitPrice: 500 },
      ]);
      const before = await allJobs(stack);
      const res = await call('POST', `${stack.origin}${ADD_PATH}`, {
        headers: {
          authorization: basic('admin', stack.env.ADMIN_TOKEN!),
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://evil.example',
          'sec-fetch-site': 'cross-site',
        },
        body: formJob(locationId),
      });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      expect(await allJobs(stack)).toEqual(before);
      expect((await stack.admin.listOrders(locationId, 'PLACED')).map((o) => o.number)).toEqual([order.number]);
    });

    it('refuses every write, even from its own page with the bearer token', async () => {
      const bearer = adminHeader(stack.env);
      for (const [method, path] of [
        ['PUT', '/admin/queues/api/queues/order-work/retry/failed'],
        ['PUT', '/admin/queues/api/queues/order-work/clean/completed'],
        ['PUT', '/admin/queues/api/queues/pause'],
        ['POST', ADD_PATH],
        ['DELETE', '/admin/queues/api/queues/order-work/obliterate'],
      ] as const) {
        const res = await call(method, `${stack.origin}${path}`, {
          headers: { ...bearer, origin: stack.origin },
          body: {},
        });
        expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 405`);
        expect(res.json()).toMatchObject({
          title: 'Method not allowed',
          detail: 'Bull Board is read-only (BULL_BOARD_WRITABLE is off)',
        });
      }
      const queues = await call(
        'GET',
        `${stack.origin}/admin/queues/api/queues?activeQueue=order-work&status=latest&page=1&jobsPerPage=1`,
        { headers: bearer },
      );
      expect(queues.json().queues[0].readOnlyMode).toBe(true);
    });

    it('cannot be framed by another site', async () => {
      const page = await call('GET', `${stack.origin}/admin/queues`, { headers: adminHeader(stack.env) });
      expect(page.status).toBe(200);
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    });
  });

  describe('writable (BULL_BOARD_WRITABLE=1)', () => {
    const stack = useStack({ BULL_BOARD_WRITABLE: '1' });
    let auth: Record<string, string>;
    beforeAll(async () => {
      auth = { authorization: basic('admin', stack.env.ADMIN_TOKEN!) };
    });

    it('refuses cross-site requests, by Sec-Fetch-Site or by Origin', async () => {
      const path = `${stack.origin}/admin/queues/api/queues/order-work/retry/failed`;
      for (const headers of <Record<string, string>[]>[
        { origin: 'https://evil.example' },
        { origin: 'null' },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site', origin: stack.origin },
        // a forwarded host is believed only with TRUST_PROXY
        { origin: 'http://evil.example', 'x-forwarded-host': 'evil.example' },
      ]) {
        const res = await call('PUT', path, { headers: { ...auth, ...headers }, body: {} });
        expect(`${JSON.stringify(headers)} ${res.status}`).toBe(`${JSON.stringify(headers)} 403`);
        expect(res.json()).toMatchObject({ detail: 'Cross-site requests to Bull Board are refused' });
      }
    });

    it('refuses form bodies, even from its own page', async () => {
      for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain']) {
        const res = await call('PUT', `${stack.origin}/admin/queues/api/queues/order-work/retry/failed`, {
          headers: { ...auth, origin: stack.origin, 'sec-fetch-site': 'same-origin', 'content-type': type },
          body: 'a=b',
        });
        expect(`${type} ${res.status}`).toBe(`${type} 415`);
      }
    });

    it('refuses adding jobs, editing their data, and emptying the queue', async () => {
      const { id: locationId } = await stack.admin.createLocation('Board writable');
      const before = await allJobs(stack);
      for (const [method, path, body] of [
        [
          'POST',
          ADD_PATH,
          { name: 'order-action', data: { scope: { locationId }, orderNumber: 1, action: { kind: 'recover' } } },
        ],
        ['PUT', '/admin/queues/api/queues/order-work/some-job/update-data', { jobData: {} }],
        ['PUT', '/admin/queues/api/queues/order-work/empty', {}],
        ['DELETE', '/admin/queues/api/queues/order-work/obliterate', {}],
      ] as const) {
        const res = await call(method, `${stack.origin}${path}`, { headers: { ...auth, origin: stack.origin }, body });
        expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 403`);
      }
      expect(await allJobs(stack)).toEqual(before);
    });

    it('retries and cleans for its own page and for scripts with the token', async () => {
      const queue = stack.api.deps.queues.current[0]!.queue;
      // A job that fails for real in the stack's worker (malformed data fails for good, at once) ...
      const failing = await queue.add(JOB.sessionClose, { sessionId: { $ne: 'board-retry' } });
      const failed = async () =>
        (await failing.getState()) === 'failed' && (await Job.fromId(queue, failing.id!))!.attemptsMade;
      await eventually(async () => (await failed()) === 1, 'the seeded job failed');
      // ... and one that completes, its finish moved back past the 5 s the board leaves a job before cleaning it.
      const { locationId } = await registerAt(stack, 'Board clean');
      const order = await stack.admin.createOrder(locationId, sampleRows);
      const done = await queue.add(JOB.orderAction, {
        scope: { locationId },
        orderNumber: order.number,
        action: { kind: 'status', newState: 'COMPLETED' },
      });
      await eventually(async () => (await done.getState()) === 'completed', 'the seeded job completed');
      const finishedOn = Date.now() - 60_000;
      const redis = new Redis(stack.env.REDIS_URL!);
      try {
        await redis.zadd(queue.keys.completed!, 'XX', finishedOn, done.id!);
        await redis.hset(queue.toKey(done.id!), 'finishedOn', finishedOn);
      } finally {
        redis.disconnect();
      }

      const board = `${stack.origin}/admin/queues/api/queues/order-work`;
      const fromPage = await call('PUT', `${board}/retry/failed`, {
        headers: { ...auth, origin: stack.origin, 'sec-fetch-site': 'same-origin' },
        body: {},
      });
      expect(fromPage.status).toBe(200);
      // run again, and failed again
      await eventually(async () => (await failed()) === 2, 'the failed job retried');
      const fromScript = await call('PUT', `${board}/clean/completed`, { headers: adminHeader(stack.env) });
      expect(fromScript.status).toBe(200);
      expect(await Job.fromId(queue, done.id!)).toBeUndefined();
      const queues = await call(
        'GET',
        `${stack.origin}/admin/queues/api/queues?activeQueue=order-work&status=latest&page=1&jobsPerPage=1`,
        { headers: auth },
      );
      expect(queues.json().queues[0].readOnlyMode).toBe(false);
    });
  });
});
