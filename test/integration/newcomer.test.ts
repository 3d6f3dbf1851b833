/**
 * What a newcomer tripped over, each kept from coming back: a subscription or an operator for a
 * location that does not exist is refused; the public port's landing page links only what that
 * port serves; the receiver and the admin CLI say what is wrong (a port in use, no service at the
 * address) instead of printing a stack trace or `fetch failed`.
 */
import net from 'node:net';
import path from 'node:path';
import { newId } from '@pos/shared/store/ids';
import { freePort } from '../../scripts/embedded/child-server';
import { adminHeader, call } from '../support/http';
import { runToEnd } from '../support/process-groups';
import { ROOT, useStack } from '../support/stack';

describe('admin writes that name locations', () => {
  const stack = useStack({ WEBHOOK_ALLOW_PRIVATE: '1' }, { worker: false });

  it('refuse a location that does not exist with a 404 naming it', async () => {
    const real = (await stack.admin.createLocation('Real')).id;
    const madeUp = newId();
    const write = (method: string, url: string, body: unknown) =>
      call(method, `${stack.operatorOrigin}${url}`, { headers: adminHeader(stack.env), body });
    const subscription = await stack.admin.createWebhook({
      url: 'http://127.0.0.1:9/hook',
      events: ['order.placed'],
      locationIds: [real],
    });
    const operator = await stack.admin.createOperator({ name: 'Real manager', role: 'manager', locationIds: [real] });
    for (const [method, url, body] of [
      [
        'POST',
        '/admin/v1/webhooks',
        { url: 'http://127.0.0.1:9/hook', events: ['order.placed'], locationIds: [real, madeUp] },
      ],
      ['PATCH', `/admin/v1/webhooks/${subscription.id}`, { locationIds: [madeUp] }],
      ['POST', '/admin/v1/operators', { name: 'Nowhere', role: 'viewer', locationIds: [madeUp] }],
      ['PATCH', `/admin/v1/operators/${operator.id}`, { locationIds: [real, madeUp] }],
    ] as const) {
      const res = await write(method, url, body);
      expect(`${method} ${url}: ${res.status} ${res.json().detail}`).toBe(
        `${method} ${url}: 404 Location ${madeUp} does not exist`,
      );
    }
    expect((await stack.admin.getWebhook(subscription.id)).locationIds).toEqual([real]);
    expect((await stack.admin.listWebhooks()).map((w) => w.id)).toEqual([subscription.id]);
  });
});

describe('the landing page with ADMIN_PORT', () => {
  const stack = useStack({ ADMIN_PORT: '0' }, { worker: false });

  it('links on each port only what that port serves', async () => {
    const publicPage = (await call('GET', `${stack.origin}/`)).text;
    const operatorPage = (await call('GET', `${stack.operatorOrigin}/`)).text;
    expect(publicPage).not.toMatch(/href="\/admin\/queues"|href="\/metrics"/);
    expect(operatorPage).toMatch(/href="\/admin\/queues"/);
    expect(operatorPage).toMatch(/href="\/metrics"/);
    for (const [page, origin] of [
      [publicPage, stack.origin],
      [operatorPage, stack.operatorOrigin],
    ] as const) {
      for (const [, href] of page.matchAll(/href="([^"]+)"/g))
        expect(
          `${origin}${href}: ${(await call('GET', `${origin}${href!}`, { headers: adminHeader(stack.env) })).status}`,
        ).toBe(`${origin}${href}: 200`);
    }
  });
});

describe('the tools a newcomer runs', () => {
  it('the webhook receiver on a port in use says so, and exits 1', async () => {
    const port = await freePort();
    const holder = net.createServer().listen(port, '0.0.0.0');
    await new Promise((resolve) => holder.once('listening', resolve));
    try {
      const run = await runToEnd(
        process.execPath,
        ['--require', 'tsx/cjs', path.join(ROOT, 'scripts', 'webhook-receiver.ts'), '--port', String(port)],
        {
          cwd: ROOT,
          env: { ...process.env, WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
        },
      );
      expect(run.code).toBe(1);
      expect(run.err).toBe(
        `webhook receiver: port ${port} is in use (another receiver, or a service listening there); choose another with --port\n`,
      );
    } finally {
      holder.close();
    }
  });

  it('the admin CLI with no service at its address names the address and what to check, and exits 1', async () => {
    const port = await freePort();
    const {
      ADMIN_TOKEN: _root,
      POS_ADMIN_TOKEN: _operator,
      POS_URL: _url,
      POS: _pos,
      POS_ADMIN: _admin,
      ...env
    } = process.env;
    const run = await runToEnd(
      process.execPath,
      ['--require', 'tsx/cjs', path.join(ROOT, 'scripts', 'admin.ts'), 'list-locations'],
      {
        cwd: ROOT,
        env: { ...env, POS_ADMIN: `http://127.0.0.1:${port}`, ADMIN_TOKEN: 'any' },
      },
    );
    expect(run.code).toBe(1);
    expect(run.err).toContain(
      `error: could not reach http://127.0.0.1:${port} (ECONNREFUSED): is the service running there?`,
    );
    expect(run.err).toContain('POS_URL, else POS_ADMIN, else POS');
    expect(run.err).not.toContain('fetch failed');
  });
});
