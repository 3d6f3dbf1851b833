/**
 * The location board (/board) in a real browser: Debian's Chromium (installed by
 * `scripts/setup.sh --test`), driven by playwright-core, against the service over real HTTP.
 * The board runs under its own Content-Security-Policy; any violation, failed request, page
 * error or request outside the service fails the test. A missing Chromium or an unbuilt board
 * fails too; neither skips.
 *
 * The operator's board is served by an API node running as a child process (so that it can be
 * restarted); orders and commands are made through the in-process node of the same deployment.
 */
import { SAMPLE_MENU } from '../../scripts/embedded/sample-menu';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { BOARD_DIST } from '@pos/api/routes/board';
import type { OrderRecord } from '@pos/shared/domain/records';
import { registerAt } from '../support/fixtures';
import { launchChromium } from '../support/chromium';
import { call, sampleRows, statusUpdate } from '../support/http';
import { ChildRole, ROOT, spawnRole, startStack } from '../support/stack';

/**
 * docs/board.md shows docs/board.png: `UPDATE_SCREENSHOTS=1` writes it there; otherwise the test
 * saves the screenshot in the temporary folder, so that a run leaves the tree as it was.
 */
const SCREENSHOT =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? path.join(ROOT, 'docs', 'board.png')
    : path.join(os.tmpdir(), 'pos-board.png');
/**
 * Waits: generous, since two cores are shared with other test files; only a hang breaks them.
 * How soon a new order shows is the bench's to measure, not a test's.
 */
const WAIT_MS = 15_000;

describe('the location board in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let node: ChildRole & { port?: number };
  let nodeOrigin: string;
  let browser: Browser;
  let kitchen: Awaited<ReturnType<typeof registerAt>>;

  beforeAll(async () => {
    if (!fs.existsSync(path.join(BOARD_DIST, 'index.html')))
      throw new Error('the board is not built: run bash scripts/setup.sh --test (or npm run build:board)');
    // short presence window and order deadline, for the presence, pause and overdue test
    stack = await startStack({ PRESENCE_WINDOW: '2s', ORDER_DEADLINE: '1s' });
    node = await spawnRole('api', stack.env);
    nodeOrigin = `http://127.0.0.1:${node.port}`;
    // one failure makes an order FAILED here, for the Recover test
    kitchen = await registerAt(stack, 'Corner Kitchen', 1);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await node?.stop();
    await stack?.close();
  });

  interface Opened {
    context: BrowserContext;
    page: Page;
    /** What went wrong in the page: failed requests, errors, policy violations, outside requests. */
    failures: string[];
    /** Every URL the page requested. */
    requests: string[];
  }

  /** A tablet in landscape, reaching only the service it was loaded from. */
  async function openBoard(origin: string): Promise<Opened> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
    const failures: string[] = [];
    const requests: string[] = [];
    await context.route(
      (url) => url.origin !== origin,
      (route) => {
        failures.push(`outside request ${route.request().url()}`);
        return route.abort();
      },
    );
    const page = await context.newPage();
    page.on('request', (request) => requests.push(request.url()));
    page.on('response', (response) => {
      // a location without a menu answers the board's menu read with a 404 (docs/menu.md): no failure
      if (response.status() === 404 && new URL(response.url()).pathname.endsWith('/menu')) return;
      if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
    });
    page.on('requestfailed', (request) => {
      // the page's own cancels (a reload, a sign-out, the end of a stream) are not failures
      if (request.failure()?.errorText !== 'net::ERR_ABORTED')
        failures.push(`${request.failure()?.errorText} ${request.url()}`);
    });
    page.on('pageerror', (err) => failures.push(`page error: ${err.message}`));
    page.on('console', (message) => {
      // a failed load is reported above, with its URL
      if (/^Failed to load resource/.test(message.text())) return;
      if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text()))
        failures.push(`console: ${message.text()}`);
    });
    const response = await page.goto(`${origin}/board`);
    expect(response?.status()).toBe(200);
    return { context, page, failures, requests };
  }

  async function signInAsOperator(
    page: Page,
    locationId: string,
    token = stack.env.ADMIN_TOKEN!,
    { waitLive = true } = {},
  ): Promise<void> {
    await page.getByRole('radio', { name: /^Operator/ }).check();
    // the token first: the locations it covers are offered once it is typed
    expect((await page.locator('form label.field').allInnerTexts()).map((text) => text.trim())).toEqual([
      'Operator token',
      'Location id',
    ]);
    await page.getByLabel('Operator token', { exact: true }).fill(token);
    await page.getByLabel('Location id', { exact: true }).fill(locationId);
    await page.getByRole('button', { name: 'Open board' }).click();
    if (waitLive) await live(page);
  }

  async function signInAsKitchen(page: Page, key: string): Promise<void> {
    await page.getByRole('radio', { name: /^Kitchen/ }).check();
    await page.getByLabel('Register key', { exact: true }).fill(key);
    await page.getByRole('button', { name: 'Open board' }).click();
    await live(page);
  }

  /** The stream is open and the board has its first read: from here on, new work is news (announced). */
  const live = async (page: Page) => {
    await page.locator('.connection[data-connection="live"]').waitFor({ timeout: WAIT_MS * 2 });
    await page.locator('main.columns[aria-busy="false"]').waitFor({ timeout: WAIT_MS });
  };
  const announced = (page: Page, text: string) =>
    page.getByRole('status').filter({ hasText: text }).waitFor({ state: 'attached', timeout: WAIT_MS });
  const region = (page: Page, name: string) => page.getByRole('region', { name, exact: true });
  const card = (page: Page, where: string, label: string): Locator =>
    region(page, where).getByRole('article', { name: new RegExp(`^${label}\\b`) });
  const gone = (locator: Locator) => locator.waitFor({ state: 'detached', timeout: WAIT_MS });
  const shown = (locator: Locator) => locator.waitFor({ state: 'visible', timeout: WAIT_MS });

  /** Neither secret appears in any URL the page requested, nor in the child node's log. */
  function expectNoSecretsLeaked(opened: Opened, secrets: string[]) {
    for (const secret of secrets) {
      expect(opened.requests.filter((url) => url.includes(secret))).toEqual([]);
      expect(node.output()).not.toContain(secret);
    }
  }

  it('operator: new orders appear as they are made; Complete, Recover and Acknowledge act on the location', async () => {
    const opened = await openBoard(nodeOrigin);
    const { page } = opened;
    try {
      // The page is the policy's: no inline script or style to allow.
      await signInAsOperator(page, kitchen.location.id);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toContain('Corner Kitchen');

      // An order made through the admin API (on the other node) shows, with no reload.
      const order = await stack.admin.createOrder(kitchen.location.id, sampleRows, 7);
      await shown(card(page, 'Orders', `Order ${order.number}`));
      const orderCard = card(page, 'Orders', `Order ${order.number}`);
      expect(await orderCard.innerText()).toContain('Table 7');
      expect(await orderCard.innerText()).toContain(sampleRows[0]!.name);
      // screen readers are told
      await announced(page, `New order ${order.number}, Table 7`);

      // Complete: off the open orders, into the finished ones; the server agrees.
      await orderCard.getByRole('button', { name: `Complete order ${order.number}` }).click();
      await gone(orderCard);
      await shown(region(page, 'Finished').getByText(`Order ${order.number}`));
      expect((await stack.admin.listOrders(kitchen.location.id, 'COMPLETED')).map((o) => o.number)).toContain(
        order.number,
      );

      // A failure report (threshold 1) makes it FAILED; Recover brings it back to the open orders.
      const failing = await stack.admin.createOrder(kitchen.location.id, sampleRows, 3);
      await shown(card(page, 'Orders', `Order ${failing.number}`));
      const report = await call('POST', `${stack.baseUrl}/orders/${failing.number}/failure`, {
        apiKey: kitchen.key,
        body: { reason: 'printer jam' },
      });
      expect(report.json<OrderRecord>().state).toBe('FAILED');
      const failedCard = card(page, 'Failed', `Order ${failing.number}`);
      await shown(failedCard);
      await gone(card(page, 'Orders', `Order ${failing.number}`));
      expect(await failedCard.innerText()).toContain('Failed 1×');
      await failedCard.getByRole('button', { name: `Recover order ${failing.number}` }).click();
      await shown(card(page, 'Orders', `Order ${failing.number}`));
      await gone(failedCard);
      expect((await stack.admin.listOrders(kitchen.location.id, 'PLACED')).map((o) => o.number)).toContain(
        failing.number,
      );

      // A command shows; Acknowledge removes it, here and for the registers.
      const command = await stack.admin.createCommand(kitchen.location.id, 'REQUEST_BILL', 3);
      const commandCard = card(page, 'Commands', 'Bill requested');
      await shown(commandCard);
      await commandCard.getByRole('button', { name: `Acknowledge command ${command.number}` }).click();
      await gone(commandCard);
      expect(await stack.admin.listCommands(kitchen.location.id)).toEqual([]);

      // Keyboard: Tab reaches the actions, and the focused one is visibly outlined.
      // (expressions as strings: these tests are typed for Node, without the DOM's types)
      await page.evaluate('document.activeElement && document.activeElement.blur()');
      let focused: string | null = '';
      for (let i = 0; i < 10 && !/^Complete order/.test(focused ?? ''); i += 1) {
        await page.keyboard.press('Tab');
        focused = await page.locator(':focus').getAttribute('aria-label');
      }
      expect(focused).toBe(`Complete order ${failing.number}`);
      expect(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');

      expect(opened.failures).toEqual([]);
      expectNoSecretsLeaked(opened, [stack.env.ADMIN_TOKEN!]);
    } finally {
      await opened.context.close();
    }
  });

  it("operator: shows the location's presence and the registers seen, pauses and resumes it, marks overdue orders with each card's age in minutes", async () => {
    const opened = await openBoard(nodeOrigin);
    const { page } = opened;
    const place = await registerAt(stack, 'Presence Kitchen');
    try {
      await signInAsOperator(page, place.location.id);
      const status = page.getByRole('region', { name: 'Location status' });
      await shown(status.getByText(/^Offline since/));
      await shown(status.getByText('No register seen lately'));

      // a register polls (on the other node): online, and the register is listed
      expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: place.key })).status).toBe(200);
      await shown(status.getByText(/^Online since/));
      await shown(
        status.getByRole('list', { name: 'Registers seen' }).getByText(/^register-Presence Kitchen: polling, seen/),
      );

      // Pause and Resume act on the location
      await status.getByRole('button', { name: 'Pause' }).click();
      await shown(status.getByText(/^Paused: customers are refused/));
      expect((await stack.admin.getLocation(place.location.id)).paused).toBe(true);
      await status.getByRole('button', { name: 'Resume' }).click();
      await shown(status.getByText('Taking orders'));
      expect((await stack.admin.getLocation(place.location.id)).paused).toBe(false);

      // an order past the location's deadline (1 s here) is marked; its age is in minutes
      const order = await stack.admin.createOrder(place.location.id, sampleRows, 5);
      const orderCard = card(page, 'Orders', `Order ${order.number}`);
      await shown(orderCard);
      await shown(orderCard.getByText('Overdue', { exact: true }));
      expect(await orderCard.locator('time').innerText()).toBe('0 min');
      expect(opened.failures).toEqual([]);
    } finally {
      await opened.context.close();
    }
  });

  it('operator: shows the snoozed products of the menu, lifts a snooze and snoozes another (docs/menu.md)', async () => {
    const opened = await openBoard(nodeOrigin);
    const { page } = opened;
    const place = await registerAt(stack, 'Menu Kitchen');
    try {
      await stack.admin.putMenu(place.location.id, SAMPLE_MENU);
      await stack.admin.setAvailability(place.location.id, 'sku-fries', { available: false, reason: 'fryer down' });
      await signInAsOperator(page, place.location.id);
      const menu = region(page, 'Snoozed');
      const fries = menu.getByRole('article', { name: 'Fries snoozed' });
      await shown(fries);
      await shown(fries.getByText('until lifted (fryer down)'));
      await fries.getByRole('button', { name: 'Lift the snooze of Fries' }).click();
      await gone(fries);
      expect((await stack.admin.getMenu(place.location.id)).items[1]!.available).toBe(true);

      await menu.getByLabel('Snooze').selectOption({ label: 'Bacon' });
      await menu.getByLabel('For how long').selectOption({ label: 'for 1 h' });
      await menu.getByRole('button', { name: 'Snooze', exact: true }).click();
      await shown(menu.getByRole('article', { name: 'Bacon snoozed' }));
      const bacon = (await stack.admin.getMenu(place.location.id)).modifierGroups[1]!.options[0]!;
      expect(bacon).toMatchObject({ productId: 'opt-bacon', available: false });
      expect(Date.parse(bacon.unavailableUntil!) - Date.now()).toBeGreaterThan(55 * 60_000);
      expect(opened.failures).toEqual([]);
    } finally {
      await opened.context.close();
    }
  });

  it('reconnects after its API node restarts, with its cursor, and shows what changed meanwhile', async () => {
    const { location } = await registerAt(stack, 'Restart Street');
    const stays = await stack.admin.createOrder(location.id, sampleRows, 1);
    const finishesMeanwhile = await stack.admin.createOrder(location.id, sampleRows, 2);
    const opened = await openBoard(nodeOrigin);
    const { page } = opened;
    try {
      await signInAsOperator(page, location.id);
      await shown(card(page, 'Orders', `Order ${finishesMeanwhile.number}`));

      await node.stop();
      await page.locator('.connection[data-connection="waiting"]').waitFor({ timeout: WAIT_MS });
      // Meanwhile, through the other node: one order finishes, one arrives, so does a command.
      await stack.admin.updateStatus(location.id, finishesMeanwhile.number, 'COMPLETED');
      const arrives = await stack.admin.createOrder(location.id, sampleRows, 9);
      const command = await stack.admin.createCommand(location.id, 'READ_TABLE_STATE', 9);

      const port = node.port!;
      node = await spawnRole('api', { ...stack.env, PORT: String(port) });
      expect(node.port).toBe(port);
      await live(page);
      await shown(card(page, 'Orders', `Order ${arrives.number}`));
      await shown(card(page, 'Commands', 'Read table state'));
      await gone(card(page, 'Orders', `Order ${finishesMeanwhile.number}`));
      await shown(card(page, 'Orders', `Order ${stays.number}`));
      // what arrived meanwhile reached the board through its read (the replay's events, held
      // back during the read, find it shown already): it is news all the same
      await announced(page, `New order ${arrives.number}, Table 9`);
      await announced(page, 'Read table state, Table 9');
      // it came back with its cursor, not from the start
      const reconnects = opened.requests.filter((url) => url.includes('/stream?'));
      expect(reconnects.at(-1)).toContain(`orderNumber=${finishesMeanwhile.number}&commandNumber=0`);
      expect(command.number).toBe(1);

      // Only the stream's attempts while the node was stopping (503) or down (refused) failed.
      expect(opened.failures.filter((f) => !f.includes(`/admin/v1/locations/${location.id}/stream`))).toEqual([]);
      expectNoSecretsLeaked(opened, [stack.env.ADMIN_TOKEN!]);
    } finally {
      await opened.context.close();
    }
  });

  it("operator token: the sign-in offers only its locations, a viewer's board has no action, another location is refused", async () => {
    const other = await stack.admin.createLocation('Not yours');
    const viewer = await stack.admin.createOperator({
      name: 'Board viewer',
      role: 'viewer',
      locationIds: [kitchen.location.id],
    });
    const order = await stack.admin.createOrder(kitchen.location.id, sampleRows, 5);
    const command = await stack.admin.createCommand(kitchen.location.id, 'REQUEST_BILL', 5);
    const opened = await openBoard(nodeOrigin);
    const { page } = opened;
    try {
      // the token's locations are offered, and only they
      await page.getByRole('radio', { name: /^Operator/ }).check();
      await page.getByLabel('Operator token', { exact: true }).fill(viewer.token);
      await page.getByLabel('Operator token', { exact: true }).blur();
      await page
        .locator(`#operator-locations option[value="${kitchen.location.id}"]`)
        .waitFor({ state: 'attached', timeout: WAIT_MS });
      expect(
        await page
          .locator('#operator-locations option')
          .evaluateAll((options) => options.map((o) => o.getAttribute('value'))),
      ).toEqual([kitchen.location.id]);

      // another location answers as a missing one
      await signInAsOperator(page, other.id, viewer.token, { waitLive: false });
      await shown(page.getByRole('alert').filter({ hasText: 'No location with that id is open to this token.' }));

      // its own: the work is shown, without a button that would change it
      await page.getByLabel('Location id', { exact: true }).fill(kitchen.location.id);
      await page.getByRole('button', { name: 'Open board' }).click();
      await live(page);
      await shown(card(page, 'Orders', `Order ${order.number}`));
      await shown(card(page, 'Commands', 'Bill requested'));
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toContain('Operator · viewer');
      expect(await page.getByRole('button', { name: /^(Complete|Abort|Acknowledge|Recover)/ }).count()).toBe(0);
      expect(opened.failures.filter((f) => !f.startsWith(`404 ${nodeOrigin}/admin/v1/locations/${other.id}`))).toEqual(
        [],
      );
      expectNoSecretsLeaked(opened, [viewer.token]);
    } finally {
      await opened.context.close();
      await stack.admin.acknowledgeCommand(kitchen.location.id, command.number);
      await stack.admin.updateStatus(kitchen.location.id, order.number, 'ABORTED');
    }
  });

  it('kitchen: its key shows its location with Complete, Abort and Acknowledge, and cannot do operator actions', async () => {
    const failed = await stack.admin.createOrder(kitchen.location.id, sampleRows, 4);
    await call('POST', `${stack.baseUrl}/orders/${failed.number}/failure`, { apiKey: kitchen.key });
    const opened = await openBoard(stack.origin);
    const { page } = opened;
    try {
      await signInAsKitchen(page, kitchen.key);
      const order = await stack.admin.createOrder(kitchen.location.id, sampleRows, 6);
      const orderCard = card(page, 'Orders', `Order ${order.number}`);
      await shown(orderCard);
      // Abort asks once more, then the register interface does it.
      await orderCard.getByRole('button', { name: `Abort order ${order.number}` }).click();
      await orderCard.getByRole('button', { name: `Confirm abort of order ${order.number}` }).click();
      await gone(orderCard);
      expect((await stack.admin.listOrders(kitchen.location.id, 'ABORTED')).map((o) => o.number)).toContain(
        order.number,
      );

      // A FAILED order is shown as waiting for an operator, without Recover.
      await stack.admin.updateStatus(kitchen.location.id, failed.number, 'PLACED'); // recovered by an operator ...
      const again = await call('POST', `${stack.baseUrl}/orders/${failed.number}/failure`, { apiKey: kitchen.key }); // ... and failing again
      expect(again.json<OrderRecord>().state).toBe('FAILED');
      const failedCard = card(page, 'Failed', `Order ${failed.number}`);
      await shown(failedCard);
      expect(await failedCard.innerText()).toContain('Waiting for an operator');
      expect(await page.getByRole('button', { name: /^Recover/ }).count()).toBe(0);

      // The page used the register interface only.
      expect(opened.requests.filter((url) => url.includes('/admin/'))).toEqual([]);
      expect(opened.failures).toEqual([]);
      expectNoSecretsLeaked(opened, [kitchen.key]);

      // The server refuses the key on every operator action, whichever header carries it ...
      const admin = (rest: string) => `${stack.origin}/admin/v1/locations/${kitchen.location.id}${rest}`;
      const operatorActions: [string, string, unknown?][] = [
        ['POST', admin(`/orders/${failed.number}/recover`)],
        ['PUT', admin(`/orders/${failed.number}/statusupdate`), { newState: 'COMPLETED' }],
        ['DELETE', admin('/commands/1')],
        ['GET', admin('/stream')],
        ['GET', admin('/orders?state=FAILED')],
        ['POST', admin('/orders'), { rows: sampleRows }],
      ];
      for (const [method, url, body] of operatorActions) {
        const carriers: Record<string, string>[] = [
          { api_key: kitchen.key },
          { authorization: `Bearer ${kitchen.key}` },
        ];
        for (const headers of carriers) {
          expect([method, url, (await call(method, url, { headers, body })).status]).toEqual([method, url, 401]);
        }
      }
      // ... including from the page itself,
      const fromPage = await page.evaluate(
        async ([url, key]) =>
          (await fetch(url!, { method: 'POST', headers: { api_key: key!, authorization: `Bearer ${key}` } })).status,
        [admin(`/orders/${failed.number}/recover`), kitchen.key],
      );
      expect(fromPage).toBe(401);
      // ... and another location's orders are not its own.
      const other = await registerAt(stack, 'Elsewhere');
      const theirs = await stack.admin.createOrder(other.location.id, sampleRows);
      const refused = await statusUpdate(stack.baseUrl, kitchen.key, theirs.number + 1000, 'COMPLETED');
      expect(refused.status).toBe(400);
      expect((await stack.admin.listOrders(kitchen.location.id, 'FAILED')).map((o) => o.number)).toContain(
        failed.number,
      );
      expect((await stack.admin.listOrders(other.location.id, 'PLACED')).map((o) => o.number)).toEqual([theirs.number]);
    } finally {
      await opened.context.close();
    }
  });

  it('a remembered sign-in survives a reload; an unticked one does not', async () => {
    const opened = await openBoard(stack.origin);
    const { page } = opened;
    try {
      await page.getByRole('radio', { name: /^Kitchen/ }).check();
      await page.getByLabel('Register key', { exact: true }).fill(kitchen.key);
      await page.getByRole('button', { name: 'Open board' }).click();
      await live(page);
      await page.reload();
      await page.getByRole('button', { name: 'Open board' }).waitFor({ timeout: WAIT_MS });

      await page.getByLabel('Register key', { exact: true }).fill(kitchen.key);
      await page.getByLabel('Remember on this device').check();
      await page.getByRole('button', { name: 'Open board' }).click();
      await live(page);
      await page.reload();
      await live(page);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Open board' }).waitFor({ timeout: WAIT_MS });
      expect(await page.evaluate('localStorage.length')).toBe(0);
      expect(opened.failures).toEqual([]);
    } finally {
      await opened.context.close();
    }
  });

  it('caps the rows a card shows: an order of 200 rows keeps its card on screen, says how many are left, and opens them on a tap', async () => {
    const { location } = await registerAt(stack, 'Long order', 3);
    const rows = Array.from({ length: 200 }, (_, i) => ({
      productId: `sku-${i + 1}`,
      name: `Dish ${i + 1}`,
      quantity: 1,
      unitPrice: 500,
    }));
    const opened = await openBoard(nodeOrigin);
    const { page } = opened;
    try {
      await signInAsOperator(page, location.id);
      const short = await stack.admin.createOrder(location.id, sampleRows, 3);
      const long = await stack.admin.createOrder(location.id, rows, 4);
      const longCard = card(page, 'Orders', `Order ${long.number}`);
      await shown(longCard);
      const box = (await longCard.boundingBox())!;
      const items = longCard.getByRole('listitem');
      expect(await items.first().innerText()).toMatch(/^1×\s+Dish 1$/);
      const firstRow = (await items.first().boundingBox())!;
      // its first row just under its header, its card no taller than a screen, the next card beside it
      expect(firstRow.y - box.y).toBeLessThan(120);
      expect(box.height).toBeLessThan(800);
      expect(await items.nth(7).isVisible()).toBe(true);
      expect(await items.nth(8).isVisible()).toBe(false);
      await longCard.getByText('192 more rows').click();
      await shown(items.last());
      expect(await items.last().innerText()).toMatch(/Dish 200$/);
      expect(await card(page, 'Orders', `Order ${short.number}`).isVisible()).toBe(true);
      expect(opened.failures).toEqual([]);
    } finally {
      await opened.context.close();
    }
  });

  it('renders a busy location for docs/board.md', async () => {
    const { location, key } = await registerAt(stack, 'Main Street Bistro', 3);
    const rows = (...items: [string, number, string?][]) =>
      items.map(([name, quantity, notes], i) => ({
        productId: `sku-${i + 1}`,
        name,
        quantity,
        unitPrice: 1290,
        ...(notes ? { notes } : {}),
      }));
    const opened = await openBoard(nodeOrigin);
    const { page } = opened;
    try {
      await signInAsOperator(page, location.id);
      const made = [
        await stack.admin.createOrder(location.id, rows(['Burger', 2, 'no onions'], ['Fries', 2], ['Lemonade', 1]), 4),
        await stack.admin.createOrder(
          location.id,
          rows(['Margherita', 1], ['Caesar salad', 1, 'dressing on the side']),
          7,
        ),
        await stack.admin.createOrder(location.id, rows(['Fish & chips', 1], ['Pale ale', 2]), 12),
        await stack.admin.createOrder(location.id, rows(['Veggie wrap', 1], ['Sparkling water', 1])),
        await stack.admin.createOrder(location.id, rows(['Steak', 1, 'medium rare'], ['House red', 1]), 2),
        await stack.admin.createOrder(location.id, rows(['Soup of the day', 1]), 9),
        await stack.admin.createOrder(location.id, rows(['Pancakes', 2]), 5),
      ];
      await call('POST', `${stack.baseUrl}/orders/${made[1]!.number}/failure`, {
        apiKey: key,
        body: { reason: 'printer jam' },
      });
      for (let i = 0; i < 3; i += 1)
        await call('POST', `${stack.baseUrl}/orders/${made[4]!.number}/failure`, { apiKey: key });
      await stack.admin.updateStatus(location.id, made[5]!.number, 'COMPLETED');
      await stack.admin.updateStatus(location.id, made[6]!.number, 'ABORTED');
      await stack.admin.createCommand(location.id, 'REQUEST_BILL', 4);
      await stack.admin.createCommand(location.id, 'READ_TABLE_STATE', 12);
      await shown(card(page, 'Failed', `Order ${made[4]!.number}`));
      await shown(card(page, 'Commands', 'Read table state'));
      await shown(region(page, 'Finished').getByText(`Order ${made[6]!.number}`));
      expect(await card(page, 'Orders', `Order ${made[1]!.number}`).innerText()).toContain('Failed 1×');
      fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(fs.statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
      expect(opened.failures).toEqual([]);
    } finally {
      await opened.context.close();
    }
  });
});
