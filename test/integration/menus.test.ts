/**
 * Menus over real HTTP (docs/menu.md): a register exports and reads its menu, with its ETag and
 * 304s; operators replace it (conditionally), publish one menu to many locations and snooze
 * products; customers' carts are priced from it, refused with every mismatch, and checked again
 * at submission; a timed snooze ends by itself; every change is an event of the feed.
 */
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import type { OrderRecord } from '@pos/shared/domain/records';
import type { LocationDoc } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import type { MenuDocument, MenuView } from '@pos/shared/schemas/menu';
import { startApi } from '@pos/api/server';
import { largeMenu, SAMPLE_MENU } from '../../scripts/embedded/sample-menu';
import { Customer, customerAt } from '../support/customer';
import { useDb } from '../support/fixtures';
import { adminHeader, call, sampleRows } from '../support/http';
import { metricValue } from '../support/metrics';
import { useStack } from '../support/stack';
import { eventually } from '../support/wait';

const burger = {
  productId: 'sku-burger',
  quantity: 2,
  modifiers: [{ productId: 'opt-blue' }, { productId: 'opt-bacon' }],
};
const pricedBurger = {
  rowNumber: 1,
  productId: 'sku-burger',
  name: 'Burger',
  quantity: 2,
  unitPrice: 1290,
  modifiers: [
    { productId: 'opt-blue', name: 'Blue cheese', quantity: 1, unitPrice: 100 },
    { productId: 'opt-bacon', name: 'Bacon', quantity: 1, unitPrice: 150 },
  ],
};

describe('menus', () => {
  const stack = useStack();
  const db = useDb(stack);

  /** A location with a register and a customer; `menu`: exported by the register first. */
  async function location(menu?: MenuDocument) {
    const { id } = await stack.admin.createLocation(`Menus ${Math.random()}`);
    const registerKey = (await stack.admin.createServiceSession(id, 'reg-1')).apiKey;
    const customer = await customerAt(stack, id, 1, 3);
    if (menu)
      expect((await call('PUT', `${stack.baseUrl}/menu`, { apiKey: registerKey, body: menu })).status).toBe(200);
    return { id, registerKey, customer };
  }
  const adminCall = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(method, `${stack.operatorOrigin}/admin/v1${path}`, {
      headers: { ...adminHeader(stack.env), ...headers },
      body,
    });
  const order = (customer: Customer, rows: unknown) =>
    call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows } });
  const snooze = (registerKey: string, productId: string, body: unknown) =>
    call('PUT', `${stack.baseUrl}/menu/items/${productId}/availability`, { apiKey: registerKey, body });

  describe('the register interface', () => {
    it('PUT {base}/menu stores the menu whole under version 1 (200 with the menu as stored), GET answers it with the same ETag, and a 304 for that ETag', async () => {
      const { id, registerKey, customer } = await location();
      const put = await call('PUT', `${stack.baseUrl}/menu`, { apiKey: registerKey, body: SAMPLE_MENU });
      expect(put.status).toBe(200);
      const stored = put.json<MenuView>();
      expect(stored).toEqual({
        version: 1,
        source: 'register',
        publishedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        currency: 'EUR',
        items: SAMPLE_MENU.items.map((item) => ({ ...item, available: true })),
        modifierGroups: SAMPLE_MENU.modifierGroups!.map((group) => ({
          ...group,
          options: group.options.map((option) => ({ ...option, available: true })),
        })),
      });
      expect(put.text).not.toContain('null');
      expect(put.headers.get('etag')).toBe('"1"');

      const get = await call('GET', `${stack.baseUrl}/menu`, { apiKey: registerKey });
      expect(get.status).toBe(200);
      expect(get.json()).toEqual(stored);
      expect(get.headers.get('etag')).toBe('"1"');
      const notModified = await call('GET', `${stack.baseUrl}/menu`, {
        apiKey: registerKey,
        headers: { 'if-none-match': '"1"' },
      });
      expect(notModified.status).toBe(304);
      expect(notModified.text).toBe('');
      expect(notModified.headers.get('etag')).toBe('"1"');
      expect(
        (await call('GET', `${stack.baseUrl}/menu`, { apiKey: registerKey, headers: { 'if-none-match': '"0"' } }))
          .status,
      ).toBe(200);

      // the same version, the same ETag, wherever it is answered
      const admin = await adminCall('GET', `/locations/${id}/menu`);
      expect(admin.status).toBe(200);
      expect(admin.headers.get('etag')).toBe('"1"');
      expect(admin.json()).toEqual(stored);
      const forCustomer = await call('GET', `${customer.url}/menu`, {
        apiKey: customer.key,
        headers: { 'if-none-match': '"1"' },
      });
      expect(forCustomer.status).toBe(304);

      const again = await call('PUT', `${stack.baseUrl}/menu`, {
        apiKey: registerKey,
        body: { items: [SAMPLE_MENU.items[1]!] },
      });
      expect(again.json<MenuView>()).toMatchObject({
        version: 2,
        items: [{ productId: 'sku-fries', available: true }],
        modifierGroups: [],
      });
      expect(again.headers.get('etag')).toBe('"2"');
      expect(
        (await call('GET', `${customer.url}/menu`, { apiKey: customer.key, headers: { 'if-none-match': '"1"' } }))
          .status,
      ).toBe(200);
    });

    it('no menu is a 404 problem for the register, the customer and the admin API', async () => {
      const { id, registerKey, customer } = await location();
      for (const res of [
        await call('GET', `${stack.baseUrl}/menu`, { apiKey: registerKey }),
        await call('GET', `${customer.url}/menu`, { apiKey: customer.key }),
        await adminCall('GET', `/locations/${id}/menu`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.json()).toMatchObject({ title: 'Not found', status: 404, detail: 'Location has no menu' });
      }
    });

    it('an invalid menu is a 422 `Invalid menu` listing every error by JSON pointer, and changes nothing', async () => {
      const { registerKey } = await location(SAMPLE_MENU);
      const bad = {
        items: [
          { productId: 'a', name: 'A', price: 100, modifierGroupIds: ['nowhere'] },
          { productId: 'a', name: 'A again', price: 200 },
        ],
        modifierGroups: [{ id: 'g', name: 'G', min: 3, max: 1, options: [{ productId: 'o', name: 'O', price: 0 }] }],
      };
      const res = await call('PUT', `${stack.baseUrl}/menu`, { apiKey: registerKey, body: bad });
      expect(res.status).toBe(422);
      expect(res.json()).toEqual({
        type: 'about:blank',
        title: 'Invalid menu',
        status: 422,
        detail: expect.any(String),
        instance: '/api/v1/menu',
        errors: expect.arrayContaining([
          { pointer: '/items/1/productId', detail: 'duplicates the productId at /items/0/productId' },
          { pointer: '/items/0/modifierGroupIds/0', detail: 'names a modifier group the menu does not define' },
          { pointer: '/modifierGroups/0/min', detail: 'is over max (1)' },
        ]),
      });
      expect(res.json().errors).toHaveLength(3);

      const shapes = await call('PUT', `${stack.baseUrl}/menu`, {
        apiKey: registerKey,
        body: {
          items: [
            { productId: 'a', name: 'A', price: -1, colour: 'red' },
            { productId: 'b', name: 'B', price: 1.5 },
          ],
        },
      });
      expect(shapes.status).toBe(422);
      expect(shapes.json().errors).toEqual(
        expect.arrayContaining([
          { pointer: '/items/0/colour', detail: 'is not a field of the menu' },
          { pointer: '/items/0/price', detail: 'must be >= 0' },
          { pointer: '/items/1/price', detail: 'must be integer' },
        ]),
      );
      const menu = await call('GET', `${stack.baseUrl}/menu`, { apiKey: registerKey });
      expect(menu.json()).toMatchObject({
        version: 1,
        items: [{ productId: 'sku-burger' }, { productId: 'sku-fries' }, { productId: 'sku-salad' }],
      });
    });

    it('a menu far past BODY_LIMIT is taken (2,000 items), and one past MENU_BODY_LIMIT is a 413', async () => {
      const { registerKey } = await location();
      const big = largeMenu(2000);
      expect(JSON.stringify(big).length).toBeGreaterThan(65_536);
      const res = await call('PUT', `${stack.baseUrl}/menu`, { apiKey: registerKey, body: big });
      expect(res.status).toBe(200);
      expect(res.json<MenuView>().items).toHaveLength(2000);
      const tooBig = { items: big.items.map((item) => ({ ...item, description: 'x'.repeat(2000) })) };
      expect(JSON.stringify(tooBig).length).toBeGreaterThan(4_194_304);
      const refused = await call('PUT', `${stack.baseUrl}/menu`, { apiKey: registerKey, body: tooBig });
      expect(refused.status).toBe(413);
      expect(refused.json().title).toBe('Payload too large');
    });

    it('uploads at once each get a version of their own, and the menu served is the one with the newest version', async () => {
      const { registerKey } = await location();
      const menus = Array.from({ length: 8 }, (_, i) => ({
        items: [{ productId: `sku-${i}`, name: `Dish ${i}`, price: 100 + i }],
      }));
      const answers = await Promise.all(
        menus.map((body) => call('PUT', `${stack.baseUrl}/menu`, { apiKey: registerKey, body })),
      );
      expect(answers.map((res) => res.status)).toEqual(menus.map(() => 200));
      const versions = answers.map((res) => res.json<MenuView>().version);
      expect([...versions].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const newest = answers[versions.indexOf(8)]!.json<MenuView>();
      const served = await call('GET', `${stack.baseUrl}/menu`, { apiKey: registerKey });
      expect(served.json()).toEqual(newest);
    });
  });

  describe('availability', () => {
    it('a register snoozes a product (item or option) and lifts it; the menu shows it, and a customer cannot order it meanwhile', async () => {
      const { id, registerKey, customer } = await location(SAMPLE_MENU);
      const until = new Date(Date.now() + 3_600_000).toISOString();
      const res = await snooze(registerKey, 'sku-fries', { available: false, until, reason: 'sold out' });
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ productId: 'sku-fries', available: false, until, reason: 'sold out' });
      expect((await snooze(registerKey, 'opt-bacon', { available: false })).json()).toEqual({
        productId: 'opt-bacon',
        available: false,
      });

      const menu = await call('GET', `${customer.url}/menu`, { apiKey: customer.key });
      expect(menu.headers.get('etag')).toMatch(/^"1-[A-Za-z0-9_-]+"$/);
      expect(menu.json<MenuView>().items[1]).toEqual({
        ...SAMPLE_MENU.items[1],
        available: false,
        unavailableUntil: until,
        unavailableReason: 'sold out',
      });
      expect(menu.json<MenuView>().modifierGroups[1]!.options[0]).toEqual({
        productId: 'opt-bacon',
        name: 'Bacon',
        price: 150,
        available: false,
      });
      expect((await adminCall('GET', `/locations/${id}/menu`)).headers.get('etag')).toBe(menu.headers.get('etag'));

      const refused = await order(customer, [{ productId: 'sku-fries', quantity: 1 }, burger]);
      expect(refused.status).toBe(422);
      expect(refused.json().errors).toEqual([
        {
          row: 1,
          productId: 'sku-fries',
          code: 'product_unavailable',
          detail: `sku-fries is unavailable until ${until}`,
        },
        { row: 2, productId: 'opt-bacon', code: 'product_unavailable', detail: 'opt-bacon is unavailable' },
      ]);

      expect((await snooze(registerKey, 'sku-fries', { available: true })).json()).toEqual({
        productId: 'sku-fries',
        available: true,
      });
      expect(
        (await adminCall('PUT', `/locations/${id}/menu/items/opt-bacon/availability`, { available: true })).status,
      ).toBe(200);
      const lifted = await call('GET', `${customer.url}/menu`, { apiKey: customer.key });
      expect(lifted.headers.get('etag')).toBe('"1"');
      expect((await order(customer, [{ productId: 'sku-fries', quantity: 1 }, burger])).status).toBe(201);
    });

    it('a product not on the menu is a 404, an `until` not in the future a 400, a location without a menu a 404', async () => {
      const { registerKey } = await location(SAMPLE_MENU);
      const missing = await snooze(registerKey, 'sku-nothing', { available: false });
      expect(missing.status).toBe(404);
      expect(missing.json().detail).toBe('Product is not on the menu');
      const past = await snooze(registerKey, 'sku-fries', {
        available: false,
        until: new Date(Date.now() - 1000).toISOString(),
      });
      expect(past.status).toBe(400);
      expect(past.json().detail).toBe('until must be in the future');
      expect((await snooze(registerKey, 'sku-fries', { available: false, until: 'tomorrow' })).status).toBe(400);
      const bare = await location();
      expect((await snooze(bare.registerKey, 'sku-fries', { available: false })).json().detail).toBe(
        'Location has no menu',
      );
    });

    it('a snooze with `until` ends by itself: a read after it shows the product available, and its event follows within seconds', async () => {
      const { id, registerKey, customer } = await location(SAMPLE_MENU);
      const until = new Date(Date.now() + 1500).toISOString();
      expect((await snooze(registerKey, 'sku-salad', { available: false, until })).status).toBe(200);
      expect((await order(customer, [{ productId: 'sku-salad', quantity: 1 }])).status).toBe(422);
      await eventually(async () => Date.now() > Date.parse(until), 'the snooze to end');
      const menu = await call('GET', `${customer.url}/menu`, { apiKey: customer.key });
      expect(menu.json<MenuView>().items[2]!.available).toBe(true);
      expect(menu.headers.get('etag')).toBe('"1"');
      expect((await order(customer, [{ productId: 'sku-salad', quantity: 1 }])).status).toBe(201);
      await eventually(
        async () =>
          (await stack.admin.allEvents({ locationId: id, types: ['menu.item_availability_changed'] })).some(
            (e) => e.data.available === true,
          ),
        'the return at `until` in the event feed',
      );
      const events = await stack.admin.allEvents({ locationId: id, types: ['menu.item_availability_changed'] });
      expect(events.map((e) => e.data)).toEqual([
        { locationId: id, productId: 'sku-salad', available: false, until },
        { locationId: id, productId: 'sku-salad', available: true },
      ]);
      expect(Date.parse(events[1]!.timestamp) - Date.parse(until)).toBeLessThan(5000);
    });

    it('a snooze is kept when the menu is replaced', async () => {
      const { registerKey, customer } = await location(SAMPLE_MENU);
      await snooze(registerKey, 'sku-fries', { available: false, reason: 'fryer down' });
      await call('PUT', `${stack.baseUrl}/menu`, { apiKey: registerKey, body: { ...SAMPLE_MENU, currency: 'USD' } });
      const menu = (await call('GET', `${customer.url}/menu`, { apiKey: customer.key })).json<MenuView>();
      expect(menu).toMatchObject({ version: 2, currency: 'USD' });
      expect(menu.items[1]).toMatchObject({
        productId: 'sku-fries',
        available: false,
        unavailableReason: 'fryer down',
      });
    });
  });

  describe('customer orders priced from the menu', () => {
    it('rows name a product; the service sets names and prices, and the register, the order and the archive see them', async () => {
      const { registerKey, customer } = await location(SAMPLE_MENU);
      const created = await order(customer, [
        burger,
        { productId: 'sku-fries', quantity: 1, notes: 'no salt', unitPrice: 450 },
      ]);
      expect(created.status).toBe(201);
      const record = created.json<OrderRecord>();
      expect(record.rows).toEqual([
        pricedBurger,
        { rowNumber: 2, productId: 'sku-fries', name: 'Fries', quantity: 1, unitPrice: 450, notes: 'no salt' },
      ]);
      expect(created.text).not.toContain('null');
      expect(
        (await call('POST', `${customer.url}/orders/${record.number}/finish`, { apiKey: customer.key })).status,
      ).toBe(200);
      expect(
        (await call('POST', `${customer.url}/orders/${record.number}/submit`, { apiKey: customer.key })).status,
      ).toBe(200);
      const work = (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: registerKey })).json<
        OrderRecord[]
      >();
      expect(work.find((o) => o.number === record.number)!.rows).toEqual(record.rows);

      // a later menu does not reprice the order
      await call('PUT', `${stack.baseUrl}/menu`, {
        apiKey: registerKey,
        body: { items: [{ ...SAMPLE_MENU.items[0]!, price: 9999, modifierGroupIds: [] }] },
      });
      const read = await call('GET', `${customer.url}/orders/${record.number}`, { apiKey: customer.key });
      expect(read.json<OrderRecord>().rows).toEqual(record.rows);
    });

    it('a cart the menu does not allow is a 422 `Menu mismatch` listing every bad row, and creates nothing', async () => {
      const { id, customer } = await location(SAMPLE_MENU);
      const first = (await order(customer, [burger])).json<OrderRecord>();
      const refusedBefore = await metricValue(stack.origin, 'pos_menu_carts_total', { outcome: 'refused' });
      const res = await order(customer, [
        {
          productId: 'sku-burger',
          quantity: 1,
          name: 'Burger',
          unitPrice: 0,
          modifiers: [{ productId: 'opt-cheddar' }],
        },
        { productId: 'sku-ghost', quantity: 1 },
        {
          productId: 'sku-burger',
          quantity: 1,
          modifiers: [{ productId: 'opt-cheddar' }, { productId: 'opt-blue' }, { productId: 'sku-fries' }],
        },
        {
          productId: 'sku-burger',
          quantity: 1,
          modifiers: [{ productId: 'opt-cheddar' }, { productId: 'opt-egg', quantity: 3 }],
        },
      ]);
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ title: 'Menu mismatch', status: 422 });
      expect(res.json().errors).toEqual([
        { row: 1, productId: 'sku-burger', code: 'price_mismatch', detail: 'sku-burger costs 1290, not 0' },
        { row: 2, productId: 'sku-ghost', code: 'product_not_found', detail: 'sku-ghost is not on the menu' },
        {
          row: 3,
          productId: 'sku-fries',
          code: 'modifier_not_found',
          detail: 'sku-fries is not an option of sku-burger',
        },
        { row: 3, productId: 'sku-burger', code: 'modifier_count', detail: 'Cheese takes 1 option(s); 2 chosen' },
        { row: 4, productId: 'sku-burger', code: 'modifier_count', detail: 'Extras takes 0 to 2 option(s); 3 chosen' },
      ]);
      expect(res.text).not.toContain('null');
      expect(await metricValue(stack.origin, 'pos_menu_carts_total', { outcome: 'refused' })).toBe(refusedBefore + 1);
      // nothing was created: the next order takes the next number
      expect((await order(customer, [burger])).json<OrderRecord>().number).toBe(first.number + 1);
      expect(await db.db.collection('orders').countDocuments({ locationId: id })).toBe(2);
      expect(
        await db.db.collection('orders').countDocuments({ locationId: id, number: { $gt: first.number + 1 } }),
      ).toBe(0);
    });

    it('replacing the rows while SELECTING prices them again', async () => {
      const { customer } = await location(SAMPLE_MENU);
      const { number } = (await order(customer, [burger])).json<OrderRecord>();
      const replaced = await call('PUT', `${customer.url}/orders/${number}/rows`, {
        apiKey: customer.key,
        body: { rows: [{ productId: 'sku-salad', quantity: 2 }] },
      });
      expect(replaced.status).toBe(200);
      expect(replaced.json<OrderRecord>().rows).toEqual([
        { rowNumber: 1, productId: 'sku-salad', name: 'Salad', quantity: 2, unitPrice: 890 },
      ]);
      const bad = await call('PUT', `${customer.url}/orders/${number}/rows`, {
        apiKey: customer.key,
        body: { rows: [{ productId: 'sku-salad', quantity: 1, unitPrice: 1 }] },
      });
      expect(bad.status).toBe(422);
      expect(bad.json().errors[0].code).toBe('price_mismatch');
    });

    it('submitting checks availability again: a product snoozed since is a 422 `product_unavailable`, and the order stays NEW', async () => {
      const { registerKey, customer } = await location(SAMPLE_MENU);
      const { number } = (await order(customer, [burger])).json<OrderRecord>();
      expect((await call('POST', `${customer.url}/orders/${number}/finish`, { apiKey: customer.key })).status).toBe(
        200,
      );
      await snooze(registerKey, 'opt-blue', { available: false });
      const refused = await call('POST', `${customer.url}/orders/${number}/submit`, { apiKey: customer.key });
      expect(refused.status).toBe(422);
      expect(refused.json()).toMatchObject({
        title: 'Menu mismatch',
        errors: [{ row: 1, productId: 'opt-blue', code: 'product_unavailable', detail: 'opt-blue is unavailable' }],
      });
      expect((await call('GET', `${customer.url}/orders/${number}`, { apiKey: customer.key })).json().state).toBe(
        'NEW',
      );
      await snooze(registerKey, 'opt-blue', { available: true });
      expect(
        (await call('POST', `${customer.url}/orders/${number}/submit`, { apiKey: customer.key })).json().state,
      ).toBe('PLACED');
    });

    it('a location without a menu keeps the rules of 0.5.0: rows carry their own name and price', async () => {
      const { customer } = await location();
      const created = await order(customer, sampleRows);
      expect(created.status).toBe(201);
      expect(created.json<OrderRecord>().rows).toEqual(sampleRows.map((row, i) => ({ rowNumber: i + 1, ...row })));
      const bare = await order(customer, [{ productId: 'sku-burger', quantity: 1 }]);
      expect(bare.status).toBe(400);
      expect(bare.json().detail).toBe('rows.0.Location name is required.');
    });

    it("an operator's counter order is priced from the menu too, and may sell a snoozed product", async () => {
      const { id, registerKey } = await location(SAMPLE_MENU);
      await snooze(registerKey, 'sku-fries', { available: false });
      const res = await adminCall('POST', `/locations/${id}/orders`, {
        rows: [burger, { productId: 'sku-fries', quantity: 1 }],
      });
      expect(res.status).toBe(201);
      expect(res.json<OrderRecord>()).toMatchObject({
        state: 'PLACED',
        rows: [pricedBurger, { rowNumber: 2, productId: 'sku-fries', name: 'Fries', unitPrice: 450 }],
      });
      const wrong = await adminCall('POST', `/locations/${id}/orders`, {
        rows: [{ productId: 'sku-fries', quantity: 1, unitPrice: 1 }],
      });
      expect(wrong.status).toBe(422);
      expect(wrong.json().errors[0].code).toBe('price_mismatch');
    });

    it('once a menu PUT is answered, no API node prices a row by an older version', async () => {
      const { registerKey, customer } = await location(SAMPLE_MENU);
      const config = loadConfig(stack.env);
      const other = await startApi(config, createLogger('silent', 'test'));
      try {
        const otherUrl = `http://127.0.0.1:${other.port}${config.http.basePath}/customer`;
        const fries = [{ productId: 'sku-fries', quantity: 1 }];
        expect(
          (await call('POST', `${otherUrl}/orders`, { apiKey: customer.key, body: { rows: fries } })).json().rows[0]
            .unitPrice,
        ).toBe(450);
        for (const price of [460, 470, 480]) {
          const menu = {
            ...SAMPLE_MENU,
            items: SAMPLE_MENU.items.map((item) => (item.productId === 'sku-fries' ? { ...item, price } : item)),
          };
          expect((await call('PUT', `${stack.baseUrl}/menu`, { apiKey: registerKey, body: menu })).status).toBe(200);
          const created = await call('POST', `${otherUrl}/orders`, { apiKey: customer.key, body: { rows: fries } });
          expect(created.json().rows[0].unitPrice).toBe(price);
          await call('POST', `${otherUrl}/orders/${created.json().number}/finish`, { apiKey: customer.key });
        }
      } finally {
        await other.close();
      }
    });
  });

  describe('operators', () => {
    it('PUT /admin/v1/locations/{id}/menu replaces the menu, asks the registers to fetch it, is audited by hash and counts; If-Match makes it conditional', async () => {
      const { id, registerKey } = await location(SAMPLE_MENU);
      const put = await adminCall('PUT', `/locations/${id}/menu`, largeMenu(10), { 'if-match': '"1"' });
      expect(put.status).toBe(200);
      expect(put.json()).toMatchObject({ version: 2, source: 'operator' });
      expect(put.headers.get('etag')).toBe('"2"');
      // on the wire FETCH_REMOTE_MENU is a command with `exportMainData`, as EXPORT_DATA is
      const work = (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: registerKey })).json<
        { number: number; exportMainData?: boolean }[]
      >();
      expect(work).toEqual([expect.objectContaining({ exportMainData: true })]);
      expect(await db.db.collection('commands').findOne({ locationId: id, number: work[0]!.number })).toMatchObject({
        kind: 'FETCH_REMOTE_MENU',
      });

      const stale = await adminCall('PUT', `/locations/${id}/menu`, SAMPLE_MENU, { 'if-match': '"1"' });
      expect(stale.status).toBe(412);
      expect(stale.json()).toMatchObject({ title: 'Precondition failed', status: 412 });
      expect((await adminCall('PUT', `/locations/${id}/menu`, SAMPLE_MENU, { 'if-match': 'garbage' })).status).toBe(
        412,
      );
      expect((await adminCall('GET', `/locations/${id}/menu`)).json().version).toBe(2);
      // a snooze does not change the version If-Match names
      await snooze(registerKey, 'sku-fries', { available: false });
      const etag = (await adminCall('GET', `/locations/${id}/menu`)).headers.get('etag')!;
      expect(etag).toMatch(/^"2-/);
      expect((await adminCall('PUT', `/locations/${id}/menu`, SAMPLE_MENU, { 'if-match': etag })).status).toBe(200);

      const audit = await stack.admin.listAudit({ locationId: id });
      const record = audit.find(
        (r) => r.method === 'PUT' && r.route === '/admin/v1/locations/:id/menu' && r.status === 200,
      )!;
      expect(record.change).toEqual({
        id,
        after: { menuId: expect.any(String), items: 3, modifierGroups: 2, options: 4, version: 3 },
      });
      expect(JSON.stringify(audit)).not.toContain('Blue cheese');
    });

    it('POST /admin/v1/menus/publish publishes one menu to many locations, stored once; a missing location or an invalid menu publishes nothing', async () => {
      const locations = await Promise.all([location(), location(SAMPLE_MENU), location()]);
      const ids = locations.map((l) => l.id);
      const menu = largeMenu(50);
      const res = await adminCall('POST', '/menus/publish', { locationIds: ids, menu });
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({
        results: [
          { locationId: ids[0], version: 1 },
          { locationId: ids[1], version: 2 },
          { locationId: ids[2], version: 1 },
        ],
      });
      for (const { customer } of locations)
        expect(
          (await call('GET', `${customer.url}/menu`, { apiKey: customer.key })).json<MenuView>().items,
        ).toHaveLength(50);
      const stored = await db.db.collection('menus').find({}).toArray();
      expect(stored.filter((doc) => JSON.stringify(doc.menu) === JSON.stringify(menu))).toHaveLength(1);

      const missing = await adminCall('POST', '/menus/publish', {
        locationIds: [ids[0], 'loc_nowhere'],
        menu: SAMPLE_MENU,
      });
      expect(missing.status).toBe(404);
      expect(missing.json().detail).toBe('Location loc_nowhere does not exist');
      const invalid = await adminCall('POST', '/menus/publish', {
        locationIds: ids,
        menu: { items: [{ productId: 'a', name: 'A' }] },
      });
      expect(invalid.status).toBe(422);
      expect(invalid.json().errors).toEqual([{ pointer: '/menu/items/0/price', detail: 'is required' }]);
      for (const id of ids)
        expect((await adminCall('GET', `/locations/${id}/menu`)).json<MenuView>().items).toHaveLength(50);

      const tooMany = await adminCall('POST', '/menus/publish', {
        locationIds: Array.from({ length: 1001 }, (_, i) => `loc_${i}`),
        menu,
      });
      expect(tooMany.status).toBe(400);
    });

    it('publishes to many locations in one call, a batch of writes at a time: each draws its version and gets a FETCH_REMOTE_MENU command', async () => {
      // the locations as the service creates them, written at once; more than two of the store's batches
      const now = new Date();
      const ids = Array.from({ length: 250 }, () => newId());
      await db.db.collection<LocationDoc>('locations').insertMany(
        ids.map((_id, i) => ({
          _id,
          name: `Chain ${i}`,
          failureThreshold: 3,
          orderSeq: 0,
          commandSeq: 0,
          createdAt: now,
        })),
      );
      const res = await adminCall('POST', '/menus/publish', { locationIds: ids, menu: SAMPLE_MENU });
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ results: ids.map((locationId) => ({ locationId, version: 1 })) });
      expect(
        await db.db.collection<LocationDoc>('locations').countDocuments({ _id: { $in: ids }, 'menu.version': 1 }),
      ).toBe(250);
      expect(
        await db.db.collection('commands').countDocuments({ locationId: { $in: ids }, kind: 'FETCH_REMOTE_MENU' }),
      ).toBe(250);
    });

    it('publishing to a location beyond an operator’s own is a 403', async () => {
      const [mine, theirs] = await Promise.all([location(), location()]);
      const { token } = await stack.admin.createOperator({ name: 'bound', role: 'manager', locationIds: [mine.id] });
      const asBound = (body: unknown) =>
        call('POST', `${stack.operatorOrigin}/admin/v1/menus/publish`, {
          headers: { authorization: `Bearer ${token}` },
          body,
        });
      expect((await asBound({ locationIds: [mine.id, theirs.id], menu: SAMPLE_MENU })).status).toBe(403);
      expect((await asBound({ locationIds: [mine.id], menu: SAMPLE_MENU })).status).toBe(200);
      expect((await adminCall('GET', `/locations/${theirs.id}/menu`)).status).toBe(404);
    });

    it('every accepted menu is a `menu.published` event, every snooze and lift a `menu.item_availability_changed`', async () => {
      const { id, registerKey } = await location(SAMPLE_MENU);
      await adminCall('PUT', `/locations/${id}/menu`, largeMenu(5));
      await snooze(registerKey, 'sku-fries', { available: false, reason: 'sold out' });
      await snooze(registerKey, 'sku-fries', { available: true });
      await eventually(
        async () =>
          (await stack.admin.allEvents({ locationId: id, types: ['menu.published', 'menu.item_availability_changed'] }))
            .length >= 4,
        'four menu events',
      );
      const events = await stack.admin.allEvents({
        locationId: id,
        types: ['menu.published', 'menu.item_availability_changed'],
      });
      expect(events.map((e) => [e.type, e.data])).toEqual([
        [
          'menu.published',
          { locationId: id, version: 1, source: 'register', counts: { items: 3, modifierGroups: 2, options: 4 } },
        ],
        [
          'menu.published',
          { locationId: id, version: 2, source: 'operator', counts: { items: 5, modifierGroups: 1, options: 2 } },
        ],
        [
          'menu.item_availability_changed',
          { locationId: id, productId: 'sku-fries', available: false, reason: 'sold out' },
        ],
        ['menu.item_availability_changed', { locationId: id, productId: 'sku-fries', available: true }],
      ]);
    });
  });
});
