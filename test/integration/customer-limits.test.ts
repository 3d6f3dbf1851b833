/**
 * What one customer key may create: orders and commands for its own table only, at most
 * CUSTOMER_MAX_OPEN_ORDERS open orders (any not yet completed or aborted) and
 * CUSTOMER_MAX_COMMANDS live commands at once (a 429 with Retry-After beyond), whatever the
 * requests' concurrency.
 */
import type { OrderRecord } from '@pos/shared/domain/records';
import { Customer, customerAt } from '../support/customer';
import { useDb } from '../support/fixtures';
import { call, sampleRows, statusUpdate } from '../support/http';
import { useStack } from '../support/stack';

describe('customer limits', () => {
  const stack = useStack({ CUSTOMER_MAX_OPEN_ORDERS: '2', CUSTOMER_MAX_COMMANDS: '2', COMMAND_TTL: '10m' });
  let locationId: string;
  let registerKey: string;
  const db = useDb(stack);

  beforeAll(async () => {
    locationId = (await stack.admin.createLocation('Limits')).id;
    registerKey = (await stack.admin.createServiceSession(locationId, 'reg-limits')).apiKey;
  });

  const order = (customer: Customer, body: unknown = { rows: sampleRows }) =>
    call('POST', `${customer.url}/orders`, { apiKey: customer.key, body });
  const command = (customer: Customer, body: unknown) =>
    call('POST', `${customer.url}/commands`, { apiKey: customer.key, body });
  const expectProblem = (res: Awaited<ReturnType<typeof call>>, status: number, title: string, detail: RegExp) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status, title });
    expect(res.json().detail).toMatch(detail);
  };

  describe('the table', () => {
    it('a customer seated at table 3 orders and asks for the bill for table 3 only', async () => {
      const seated = await customerAt(stack, locationId, 301, 3);
      expectProblem(
        await order(seated, { rows: sampleRows, tableNumber: 99 }),
        400,
        'Illegal argument',
        /^tableNumber must be this session's table \(3\)$/,
      );
      expectProblem(
        await command(seated, { kind: 'REQUEST_BILL', tableNumber: 99 }),
        400,
        'Illegal argument',
        /^tableNumber must be this session's table \(3\)$/,
      );
      expectProblem(
        await command(seated, { kind: 'READ_TABLE_STATE', tableNumber: 4 }),
        400,
        'Illegal argument',
        /this session's table/,
      );

      const own = await order(seated, { rows: sampleRows, tableNumber: 3 });
      expect(own.status).toBe(201);
      expect(own.json().tableNumber).toBe(3);
      const bill = await command(seated, { kind: 'REQUEST_BILL' });
      expect(bill.status).toBe(201);
      expect(bill.json()).toMatchObject({ tableNumber: 3, paymentNumber: 1 });
      // What the session stored (its orders are SELECTING, which no register list shows): table 3 only.
      const tables = async (collection: string) =>
        (await db.db.collection(collection).find({ sessionId: seated.sessionId }).toArray()).map(
          (doc) => doc.tableNumber,
        );
      expect(await tables('orders')).toEqual([3]);
      expect(await tables('commands')).toEqual([3]);
      await call('DELETE', `${stack.baseUrl}/commands/${bill.json().number}`, { apiKey: registerKey });
    });

    it('a customer without a table names none', async () => {
      const takeout = await customerAt(stack, locationId, 302);
      expectProblem(
        await order(takeout, { rows: sampleRows, tableNumber: 5 }),
        400,
        'Illegal argument',
        /^tableNumber cannot be given: this session has no table$/,
      );
      expectProblem(
        await command(takeout, { kind: 'REQUEST_BILL', tableNumber: 5 }),
        400,
        'Illegal argument',
        /this session has no table/,
      );
      const created = await order(takeout);
      expect(created.status).toBe(201);
      expect(created.json()).not.toHaveProperty('tableNumber');
    });
  });

  describe('open orders', () => {
    const openOrdersOf = (customer: Customer) =>
      db.db
        .collection('orders')
        .countDocuments({ sessionId: customer.sessionId, state: { $in: ['SELECTING', 'NEW', 'PLACED', 'FAILED'] } });
    const refusedAtCap =
      /^This session already has 2 open orders; another can be opened once one is completed or aborted$/;

    it('refuses an order beyond CUSTOMER_MAX_OPEN_ORDERS with a 429; finishing one frees no place', async () => {
      const customer = await customerAt(stack, locationId, 303, 6);
      const first = (await order(customer)).json<OrderRecord>();
      expect((await order(customer)).status).toBe(201);
      const refused = await order(customer);
      expectProblem(refused, 429, 'Too many requests', refusedAtCap);
      expect(refused.headers.get('retry-after')).toBe('60');

      // Finishing one does not free a place: a NEW order is still open.
      expect(
        (await call('POST', `${customer.url}/orders/${first.number}/finish`, { apiKey: customer.key })).status,
      ).toBe(200);
      expectProblem(await order(customer), 429, 'Too many requests', refusedAtCap);
      expect(await openOrdersOf(customer)).toBe(2);
      // the cap is per session: another customer orders
      expect((await order(await customerAt(stack, locationId, 304, 6))).status).toBe(201);
    });

    it('counts NEW and PLACED orders: a create, finish and submit loop stops at the cap, and the kitchen gets no more', async () => {
      const customer = await customerAt(stack, locationId, 308, 10);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const created = await order(customer);
        statuses.push(created.status);
        if (created.status === 201) {
          const { number } = created.json<OrderRecord>();
          expect((await call('POST', `${customer.url}/orders/${number}/finish`, { apiKey: customer.key })).status).toBe(
            200,
          );
          expect((await call('POST', `${customer.url}/orders/${number}/submit`, { apiKey: customer.key })).status).toBe(
            200,
          );
        } else expectProblem(created, 429, 'Too many requests', refusedAtCap);
        expect(await openOrdersOf(customer)).toBeLessThanOrEqual(2);
      }
      expect(statuses).toEqual([201, 201, 429, 429, 429, 429]);
      const placed = (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: registerKey }))
        .json<OrderRecord[]>()
        .filter((o) => o.userNumber === 308);
      expect(placed.map((o) => o.state)).toEqual(['PLACED', 'PLACED']);

      // The register completes one: a place frees.
      expect((await statusUpdate(stack.baseUrl, registerKey, placed[0]!.number, 'COMPLETED')).status).toBe(200);
      expect((await order(customer)).status).toBe(201);
      expect((await order(customer)).status).toBe(429);
      expect(await openOrdersOf(customer)).toBe(2);
    });

    it('holds under a burst of concurrent requests', async () => {
      const customer = await customerAt(stack, locationId, 305, 7);
      const answers = await Promise.all(Array.from({ length: 12 }, () => order(customer)));
      expect(answers.map((res) => res.status).sort()).toEqual([...Array(2).fill(201), ...Array(10).fill(429)]);
      expect(
        await stack.admin
          .listOrders(locationId, 'SELECTING')
          .then((orders) => orders.filter((o) => o.userNumber === 305).length),
      ).toBe(2);
      expect(await db.db.collection('orders').countDocuments({ sessionId: customer.sessionId })).toBe(2);
    });
  });

  describe('commands', () => {
    /** The session's live commands as stored (an acknowledged one is kept a while, no longer live). */
    const storedCommandsOf = (customer: Customer) =>
      db.db
        .collection('commands')
        .countDocuments({ sessionId: customer.sessionId, acknowledgedAt: { $exists: false } });

    it('refuses a command beyond CUSTOMER_MAX_COMMANDS live ones with a 429, until the register acknowledges one', async () => {
      const customer = await customerAt(stack, locationId, 306, 8);
      const first = (await command(customer, { kind: 'READ_TABLE_STATE' })).json<{ number: number }>();
      expect((await command(customer, { kind: 'REQUEST_BILL' })).status).toBe(201);
      const refused = await command(customer, { kind: 'REQUEST_BILL' });
      expectProblem(
        refused,
        429,
        'Too many requests',
        /^This session already has 2 commands waiting for the register$/,
      );
      expect(await storedCommandsOf(customer)).toBe(2);
      // until the oldest expires (COMMAND_TTL, 10 minutes), at the latest
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(600);

      expect((await call('DELETE', `${stack.baseUrl}/commands/${first.number}`, { apiKey: registerKey })).status).toBe(
        200,
      );
      expect((await command(customer, { kind: 'REQUEST_BILL' })).status).toBe(201);
      expect((await command(customer, { kind: 'REQUEST_BILL' })).status).toBe(429);
      expect(await storedCommandsOf(customer)).toBe(2);
    });

    it('holds under a burst of concurrent requests, and leaves the operator\u2019s commands alone', async () => {
      const customer = await customerAt(stack, locationId, 307, 9);
      const answers = await Promise.all(Array.from({ length: 12 }, () => command(customer, { kind: 'REQUEST_BILL' })));
      expect(answers.map((res) => res.status).sort()).toEqual([...Array(2).fill(201), ...Array(10).fill(429)]);
      expect(await storedCommandsOf(customer)).toBe(2);
      // the operator's commands, of no session, are not counted against any
      const operators = () =>
        db.db.collection('commands').countDocuments({ locationId, sessionId: { $exists: false } });
      const before = await operators();
      for (let i = 0; i < 3; i += 1) await stack.admin.createCommand(locationId, 'EXPORT_DATA');
      expect(await operators()).toBe(before + 3);
    });
  });
});
