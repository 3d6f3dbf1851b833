/**
 * Menus tried as an integrator would (docs/menu.md): `npm start`, its printed `export` line, then
 * every menu contract over plain HTTP and `npm run admin`, with nothing of the service imported.
 * The register exports and reads its menu, customers order from it, operators replace, publish and
 * snooze, and every change is in the event feed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, spawnNode, type NodeChild } from '../../scripts/embedded/spawn-role';
import { signalGroup } from '../../scripts/embedded/process-group';
import { SAMPLE_MENU } from '../../scripts/embedded/sample-menu';
import { call, type HttpResult } from '../support/http';
import { runToEnd } from '../support/process-groups';
import { stackEnv } from '../support/stack';
import { eventually } from '../support/wait';

describe('menus on `npm start`, as an integrator tries them', () => {
  let service: NodeChild;
  let POS: string;
  let POS_ADMIN: string;
  let ADMIN_TOKEN: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'menu-black-box-'));

  const admin = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(method, `${POS_ADMIN}/admin/v1${url}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
      body,
    });
  const register = (method: string, url: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(method, `${POS}/api/v1${url}`, { apiKey: key, body, headers });
  /** `npm run admin -- ...`, with the token in the environment; its output parsed. */
  async function cli(...args: string[]) {
    const { ADMIN_TOKEN: _root, POS_ADMIN_TOKEN: _operator, ...env } = process.env;
    const run = await runToEnd(
      process.execPath,
      ['--require', 'tsx/cjs', path.join(ROOT, 'scripts', 'admin.ts'), ...args],
      {
        cwd: ROOT,
        env: { ...env, POS_URL: POS_ADMIN, ADMIN_TOKEN },
      },
    );
    if (run.code !== 0) throw new Error(`admin ${args.join(' ')}: exit ${run.code}\n${run.err}`);
    return JSON.parse(run.out);
  }
  async function location(name: string) {
    const id = (await admin('POST', '/locations', { name })).json().id as string;
    const registerKey = (await admin('POST', `/locations/${id}/service-sessions`, { deviceId: 'register-1' })).json()
      .apiKey as string;
    const customerKey = (
      await admin('POST', `/locations/${id}/customer-sessions`, { userNumber: 1001, tableNumber: 4 })
    ).json().apiKey as string;
    return { id, registerKey, customerKey };
  }
  /** A problem answer as `<status> <title>: <detail>`; `problem(res)` to match the start. */
  const problem = (res: HttpResult) => `${res.status} ${res.json().title}: ${res.json().detail}`;
  const menuFile = (name: string, menu: unknown) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify(menu));
    return file;
  };
  const feed = async (locationId: string, type: string) =>
    (await admin('GET', `/events?locationId=${locationId}&types=${type}&limit=100`)).json<
      { type: string; data: any }[]
    >();

  beforeAll(async () => {
    const env = { ...stackEnv({ LOG_LEVEL: 'warn' }), ADMIN_TOKEN: '' };
    service = await spawnNode({
      name: 'npm start',
      entry: 'scripts/start.ts',
      env,
      ready: /^For the tour.*: (export POS=.*)$/m,
      timeoutMs: 60_000,
    });
    const exported = new Map([...service.ready[1]!.matchAll(/(\w+)=(\S+)/g)].map(([, name, value]) => [name!, value!]));
    [POS, POS_ADMIN, ADMIN_TOKEN] = ['POS', 'POS_ADMIN', 'ADMIN_TOKEN'].map((name) => exported.get(name)!) as [
      string,
      string,
      string,
    ];
  }, 90_000);
  afterAll(async () => {
    service?.process.kill('SIGTERM');
    await service?.exited;
    if (service) signalGroup(service.process, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a register exports its menu, reads it with its ETag, and snoozes a product', async () => {
    const { id, registerKey, customerKey } = await location('Black box register');
    expect(problem(await register('GET', '/menu', registerKey))).toBe('404 Not found: Location has no menu');
    expect(problem(await register('GET', '/customer/menu', customerKey))).toBe('404 Not found: Location has no menu');

    const invalid = await register('PUT', '/menu', registerKey, {
      items: [
        { productId: 'a', name: 'A', price: -1, colour: 'red' },
        { productId: 'a', name: 'A', price: 1 },
      ],
      modifierGroups: [{ id: 'g', name: 'G', min: 2, max: 1, options: [{ productId: 'o', name: 'O', price: 0 }] }],
    });
    expect(problem(invalid)).toMatch(/^422 Invalid menu: /);
    expect(
      invalid
        .json()
        .errors.map((e: { pointer: string }) => e.pointer)
        .sort(),
    ).toEqual(['/items/0/colour', '/items/0/price', '/items/1/productId', '/modifierGroups/0/min']);

    const put = await register('PUT', '/menu', registerKey, SAMPLE_MENU);
    expect(put.status).toBe(200);
    expect(put.json()).toMatchObject({ version: 1, source: 'register', currency: 'EUR' });
    expect(put.json().items[0]).toEqual({ ...SAMPLE_MENU.items[0], available: true });
    const etag = put.headers.get('etag')!;
    const got = await register('GET', '/menu', registerKey);
    expect([got.status, got.headers.get('etag'), got.text]).toEqual([200, etag, put.text]);
    expect((await register('GET', '/menu', registerKey, undefined, { 'if-none-match': etag })).status).toBe(304);
    // the same version has the same ETag on the customer's path and the admin API's
    expect((await register('GET', '/customer/menu', customerKey)).headers.get('etag')).toBe(etag);
    expect((await admin('GET', `/locations/${id}/menu`)).headers.get('etag')).toBe(etag);

    const until = new Date(Date.now() + 3_000).toISOString();
    const snoozed = await register('PUT', '/menu/items/sku-fries/availability', registerKey, {
      available: false,
      until,
      reason: 'sold out',
    });
    expect(snoozed.status).toBe(200);
    expect(snoozed.json()).toMatchObject({ productId: 'sku-fries', available: false, until, reason: 'sold out' });
    expect(
      problem(await register('PUT', '/menu/items/sku-ghost/availability', registerKey, { available: false })),
    ).toBe('404 Not found: Product is not on the menu');
    expect(
      (
        await register('PUT', '/menu/items/sku-fries/availability', registerKey, {
          available: false,
          until: '2001-01-01T00:00:00Z',
        })
      ).status,
    ).toBe(400);
    const menu = (await register('GET', '/customer/menu', customerKey)).json();
    expect(menu.items.find((i: { productId: string }) => i.productId === 'sku-fries')).toMatchObject({
      available: false,
      unavailableUntil: until,
      unavailableReason: 'sold out',
    });
    expect((await register('GET', '/menu', registerKey, undefined, { 'if-none-match': etag })).status).toBe(200);

    // the snooze ends by itself at `until`, and says so in the feed
    await eventually(
      async () =>
        (await register('GET', '/customer/menu', customerKey))
          .json()
          .items.find((i: { productId: string }) => i.productId === 'sku-fries').available === true,
      'the snooze to end',
    );
    await eventually(
      async () => (await feed(id, 'menu.item_availability_changed')).length === 2,
      'the return at `until` in the feed',
      10_000,
    );
    expect((await feed(id, 'menu.item_availability_changed')).map((e) => e.data)).toEqual([
      { locationId: id, productId: 'sku-fries', available: false, until, reason: 'sold out' },
      { locationId: id, productId: 'sku-fries', available: true },
    ]);
    await eventually(async () => (await feed(id, 'menu.published')).length === 1, 'the published menu in the feed');
    expect((await feed(id, 'menu.published')).map((e) => e.data)).toEqual([
      { locationId: id, version: 1, source: 'register', counts: { items: 3, modifierGroups: 2, options: 4 } },
    ]);
  });

  it('a customer orders from the menu: the service prices the rows, refuses a cart the menu does not allow, and checks availability at submit', async () => {
    const { registerKey, customerKey } = await location('Black box customer');
    await register('PUT', '/menu', registerKey, SAMPLE_MENU);
    const created = await register('POST', '/customer/orders', customerKey, {
      rows: [
        { productId: 'sku-burger', quantity: 2, modifiers: [{ productId: 'opt-blue' }] },
        { productId: 'sku-fries', quantity: 1, unitPrice: 450 },
      ],
    });
    expect(created.status).toBe(201);
    expect(created.json().rows).toEqual([
      {
        rowNumber: 1,
        productId: 'sku-burger',
        name: 'Burger',
        quantity: 2,
        unitPrice: 1290,
        modifiers: [{ productId: 'opt-blue', name: 'Blue cheese', quantity: 1, unitPrice: 100 }],
      },
      { rowNumber: 2, productId: 'sku-fries', name: 'Fries', quantity: 1, unitPrice: 450 },
    ]);

    const refused = await register('POST', '/customer/orders', customerKey, {
      rows: [
        {
          productId: 'sku-burger',
          name: 'Burger',
          quantity: 1,
          unitPrice: 0,
          modifiers: [{ productId: 'opt-cheddar' }],
        },
        { productId: 'sku-ghost', quantity: 1 },
        { productId: 'sku-burger', quantity: 1, modifiers: [{ productId: 'opt-nope' }] },
        { productId: 'sku-burger', quantity: 1 },
      ],
    });
    expect(problem(refused)).toMatch(/^422 Menu mismatch: /);
    expect(refused.json().errors.map((e: { row: number; code: string }) => `${e.row} ${e.code}`)).toEqual([
      '1 price_mismatch',
      '2 product_not_found',
      '3 modifier_not_found',
      '3 modifier_count',
      '4 modifier_count',
    ]);

    const n = created.json().number;
    expect((await register('POST', `/customer/orders/${n}/finish`, customerKey)).status).toBe(200);
    await register('PUT', '/menu/items/opt-blue/availability', registerKey, { available: false });
    const submit = await register('POST', `/customer/orders/${n}/submit`, customerKey);
    expect(problem(submit)).toMatch(/^422 Menu mismatch: /);
    expect(submit.json().errors).toEqual([
      { row: 1, productId: 'opt-blue', code: 'product_unavailable', detail: 'opt-blue is unavailable' },
    ]);
    await register('PUT', '/menu/items/opt-blue/availability', registerKey, { available: true });
    expect((await register('POST', `/customer/orders/${n}/submit`, customerKey)).json().state).toBe('PLACED');
    // the register receives the priced rows as work
    const work = (await register('GET', '/orders/location', registerKey)).json<
      { number: number; rows?: unknown[] }[]
    >();
    expect(work.find((o) => o.number === n)?.rows).toEqual(created.json().rows);
  });

  it('operators replace a menu (conditionally), snooze, and publish one menu to many locations, by API and CLI', async () => {
    const a = await location('Black box A');
    const b = await location('Black box B');
    const file = menuFile('menu.json', SAMPLE_MENU);

    const first = await cli('put-menu', a.id, file);
    expect(first).toMatchObject({ version: 1, source: 'operator' });
    const etag = (await admin('GET', `/locations/${a.id}/menu`)).headers.get('etag')!;
    // the registers are asked to fetch it
    expect((await register('GET', '/orders/location', a.registerKey)).json()).toEqual([
      expect.objectContaining({ exportMainData: true }),
    ]);
    expect((await admin('PUT', `/locations/${a.id}/menu`, SAMPLE_MENU, { 'if-match': etag })).json().version).toBe(2);
    expect(problem(await admin('PUT', `/locations/${a.id}/menu`, SAMPLE_MENU, { 'if-match': etag }))).toMatch(
      /^412 Precondition failed: /,
    );

    expect(await cli('snooze', a.id, 'sku-salad', '--reason', 'no leaves')).toMatchObject({
      productId: 'sku-salad',
      available: false,
      reason: 'no leaves',
    });
    expect(
      (await cli('get-menu', a.id)).items.find((i: { productId: string }) => i.productId === 'sku-salad'),
    ).toMatchObject({ available: false, unavailableReason: 'no leaves' });
    expect(await cli('unsnooze', a.id, 'sku-salad')).toMatchObject({ productId: 'sku-salad', available: true });
    expect(
      (await admin('PUT', `/locations/${a.id}/menu/items/sku-fries/availability`, { available: false })).json(),
    ).toMatchObject({ productId: 'sku-fries', available: false });

    // an invalid menu or a missing location publishes nothing
    const missing = '0190f5c2-0000-7000-8000-000000000000';
    expect(problem(await admin('POST', '/menus/publish', { locationIds: [a.id, missing], menu: SAMPLE_MENU }))).toMatch(
      /^404 Not found: /,
    );
    expect(
      problem(await admin('POST', '/menus/publish', { locationIds: [a.id, b.id], menu: { items: [], extra: 1 } })),
    ).toMatch(/^422 Invalid menu: /);
    expect((await admin('GET', `/locations/${b.id}/menu`)).status).toBe(404);

    const published = await cli('publish-menu', file, `${a.id},${b.id}`);
    expect(published).toEqual({
      results: [
        { locationId: a.id, version: 3 },
        { locationId: b.id, version: 1 },
      ],
    });
    // the snooze outlives the replacement
    expect(
      (await register('GET', '/menu', a.registerKey))
        .json()
        .items.find((i: { productId: string }) => i.productId === 'sku-fries').available,
    ).toBe(false);
    expect((await register('GET', '/menu', b.registerKey)).json()).toMatchObject({ version: 1, source: 'operator' });
    await eventually(async () => (await feed(a.id, 'menu.published')).length === 3, 'the published menus in the feed');
    expect((await feed(a.id, 'menu.published')).map((e) => e.data.version)).toEqual([1, 2, 3]);
  });
});
