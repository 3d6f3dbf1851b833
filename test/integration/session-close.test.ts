/**
 * Closing sessions: a CUSTOMER session (by the customer or by an admin) aborts its PLACED orders
 * through the queue and the worker; a SERVICE session only loses its key.
 */
import type { OrderRecord } from '@pos/shared/domain/records';
import { Customer, customerAt, listenToLocation, placeOrder } from '../support/customer';
import { adminHeader, call, sampleRows, statusUpdate } from '../support/http';
import { useStack } from '../support/stack';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SESSION_NOT_VALID = '{"error":"Session not valid"}';

describe('closing sessions', () => {
  const stack = useStack();
  let locationId: string;
  let registerKey: string;

  const work = async (key = registerKey) =>
    (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json<OrderRecord[]>();

  /** A customer with two PLACED orders, one still SELECTING, one NEW and one COMPLETED. */
  async function busyCustomer(userNumber: number) {
    const customer = await customerAt(stack, locationId, userNumber, 5);
    const placed = [await placeOrder(customer), await placeOrder(customer)];
    const selecting = (
      await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } })
    ).json<OrderRecord>();
    const fresh = (
      await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } })
    ).json<OrderRecord>();
    const finished = (
      await call('POST', `${customer.url}/orders/${fresh.number}/finish`, { apiKey: customer.key })
    ).json<OrderRecord>();
    const completedOrder = await placeOrder(customer);
    const completed = (
      await statusUpdate(stack.baseUrl, registerKey, completedOrder.number, 'COMPLETED')
    ).json<OrderRecord>();
    expect(completed.state).toBe('COMPLETED');
    return { customer, placed, selecting, finished, completed };
  }

  /** The customer's orders after its session closed, as the admin API lists them. */
  async function expectClosedOutcome(
    busy: Awaited<ReturnType<typeof busyCustomer>>,
    events: Awaited<ReturnType<typeof listenToLocation>>,
  ) {
    const aborted = await stack.admin.listOrders(locationId, 'ABORTED');
    for (const order of busy.placed) {
      const now = aborted.find((o) => o.number === order.number);
      expect(now).toEqual({ ...order, state: 'ABORTED', completeTime: now?.completeTime, failureCount: 0 });
      expect(now?.completeTime).toMatch(ISO);
      expect(Date.parse(now!.completeTime!)).toBeGreaterThanOrEqual(Date.parse(order.orderTime!));
    }
    expect((await work()).map((o) => o.number)).toEqual(expect.not.arrayContaining(busy.placed.map((o) => o.number)));
    // Only PLACED orders are aborted (the admin list adds each order's failure count).
    const unchanged = (record: OrderRecord) => ({ ...record, failureCount: 0 });
    expect(
      (await stack.admin.listOrders(locationId, 'SELECTING')).find((o) => o.number === busy.selecting.number),
    ).toEqual(unchanged(busy.selecting));
    expect((await stack.admin.listOrders(locationId, 'NEW')).find((o) => o.number === busy.finished.number)).toEqual(
      unchanged(busy.finished),
    );
    expect(
      (await stack.admin.listOrders(locationId, 'COMPLETED')).find((o) => o.number === busy.completed.number),
    ).toEqual(unchanged(busy.completed));

    // Each abort was announced on the location's channel, then the closing itself.
    const seen = await events.until(
      (e) =>
        busy.placed.every((p) =>
          e.some((x) => x.type === 'order' && x.record.number === p.number && x.record.state === 'ABORTED'),
        ) && e.some((x) => x.type === 'session-closed' && x.sessionId === busy.customer.sessionId),
    );
    for (const order of busy.placed) {
      const event = seen.find(
        (x) => x.type === 'order' && x.record.number === order.number && x.record.state === 'ABORTED',
      );
      expect(event?.type === 'order' && event.record.completeTime).toMatch(ISO);
    }
  }

  async function expectKeyRevoked(customer: Customer) {
    for (const [method, url] of [
      ['GET', `${customer.url}/orders/1`],
      ['POST', `${customer.url}/commands`],
      ['DELETE', `${customer.url}/session`],
    ] as const) {
      const res = await call(method, url, {
        apiKey: customer.key,
        ...(method === 'POST' ? { body: { kind: 'REQUEST_BILL' } } : {}),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(res.text).toBe(SESSION_NOT_VALID);
    }
  }

  beforeAll(async () => {
    locationId = (await stack.admin.createLocation('Closing')).id;
    registerKey = (await stack.admin.createServiceSession(locationId, 'reg-close')).apiKey;
  });

  it('a customer closing its own session aborts its PLACED orders (completeTime, announced), then its key is refused', async () => {
    const busy = await busyCustomer(1);
    const neighbour = await customerAt(stack, locationId, 2, 6);
    const neighbourOrder = await placeOrder(neighbour);
    const events = await listenToLocation(stack.env.REDIS_PREFIX!, locationId);
    try {
      const closed = await call('DELETE', `${busy.customer.url}/session`, { apiKey: busy.customer.key });
      expect(closed.status).toBe(204);
      expect(closed.text).toBe('');
      await expectClosedOutcome(busy, events);
      await expectKeyRevoked(busy.customer);
      // Another customer's orders are not touched.
      expect((await work()).find((o) => o.number === neighbourOrder.number)).toEqual(neighbourOrder);
      expect(
        (await call('GET', `${neighbour.url}/orders/${neighbourOrder.number}`, { apiKey: neighbour.key })).status,
      ).toBe(200);
    } finally {
      await events.close();
    }
  });

  it('an admin closing a customer session does the same', async () => {
    const busy = await busyCustomer(3);
    const events = await listenToLocation(stack.env.REDIS_PREFIX!, locationId);
    try {
      const closed = await call('DELETE', `${stack.origin}/admin/v1/sessions/${busy.customer.sessionId}`, {
        headers: adminHeader(stack.env),
      });
      expect(closed.status).toBe(204);
      await expectClosedOutcome(busy, events);
      await expectKeyRevoked(busy.customer);
      // Closing again changes nothing and still answers 204.
      await stack.admin.closeSession(busy.customer.sessionId);
      expect(
        (await stack.admin.listOrders(locationId, 'ABORTED')).filter((o) =>
          busy.placed.some((p) => p.number === o.number),
        ),
      ).toHaveLength(2);
    } finally {
      await events.close();
    }
  });

  it('a register can no longer complete an order aborted by the closing', async () => {
    const customer = await customerAt(stack, locationId, 4);
    const order = await placeOrder(customer);
    await stack.admin.closeSession(customer.sessionId);
    const late = await statusUpdate(stack.baseUrl, registerKey, order.number, 'COMPLETED');
    expect(late.status).toBe(409);
    expect(late.json().detail).toBe('Order is ABORTED; cannot move to COMPLETED');
  });

  it('an admin closing a SERVICE session revokes its key and leaves the orders alone', async () => {
    const doomed = await stack.admin.createServiceSession(locationId, 'reg-doomed');
    const customer = await customerAt(stack, locationId, 8);
    const order = await placeOrder(customer);
    expect((await work(doomed.apiKey)).map((o) => o.number)).toContain(order.number);

    await stack.admin.closeSession(doomed.sessionId);
    for (const [method, path, body] of [
      ['GET', '/orders/location', undefined],
      ['PUT', `/orders/${order.number}/statusupdate`, { newState: 'COMPLETED' }],
    ] as const) {
      const res = await call(method, `${stack.baseUrl}${path}`, { apiKey: doomed.apiKey, ...(body ? { body } : {}) });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(res.text).toBe(SESSION_NOT_VALID);
    }
    // The order is still PLACED, and another register still sees it.
    expect((await work()).find((o) => o.number === order.number)).toEqual(order);
    expect((await call('GET', `${customer.url}/orders/${order.number}`, { apiKey: customer.key })).json().state).toBe(
      'PLACED',
    );
  });

  it('closing an unknown session is a 404 problem', async () => {
    const res = await call('DELETE', `${stack.origin}/admin/v1/sessions/no-such-session`, {
      headers: adminHeader(stack.env),
    });
    expect(res.status).toBe(404);
    expect(res.json()).toMatchObject({ title: 'Not found', detail: 'Session does not exist' });
  });
});
