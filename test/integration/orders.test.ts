import { call, sampleRows, statusUpdate } from '../support/http';
import { registerAt, useDb } from '../support/fixtures';
import { useStack } from '../support/stack';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('orders over HTTP: listing and transitions', () => {
  const stack = useStack({ FAILURE_THRESHOLD: '3' });
  const db = useDb(stack);
  let locationId: string;
  let key: string;

  beforeAll(async () => {
    ({
      location: { id: locationId },
      key,
    } = await registerAt(stack));
  });

  const update = (n: number | string, newState: string) =>
    call('PUT', `${stack.baseUrl}/orders/${n}/statusupdate`, { apiKey: key, body: { newState } });
  const fail = (n: number, reason?: string) =>
    call('POST', `${stack.baseUrl}/orders/${n}/failure`, { apiKey: key, body: reason ? { reason } : {} });
  const newOrder = (tableNumber?: number) => stack.admin.createOrder(locationId, sampleRows, tableNumber);

  it('lists PLACED orders by number then live commands by number, as a bare array', async () => {
    const { location, key: ownKey } = await registerAt(stack, 'Listing');
    const o1 = await stack.admin.createOrder(location.id, sampleRows, 2);
    const c1 = await stack.admin.createCommand(location.id, 'REQUEST_BILL', 2);
    const o2 = await stack.admin.createOrder(location.id, sampleRows);
    const c2 = await stack.admin.createCommand(location.id, 'READ_TABLE_STATE');
    const res = await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: ownKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual([o1, o2, c1, c2]);
    expect(res.text).not.toContain('null');
    expect(o1).toMatchObject({ number: 1, state: 'PLACED', tableNumber: 2, guestCount: 1 });
    expect(o1.orderTime).toMatch(ISO_MS);
    expect(o2).not.toHaveProperty('tableNumber');
    expect(o2).not.toHaveProperty('userNumber');
    // Absent stays absent in storage too: no null is ever written.
    const stored = await db.order(location.id, o2.number);
    expect(Object.keys(stored!)).not.toEqual(expect.arrayContaining(['tableNumber']));
    expect(Object.values(stored!)).not.toContain(null);
    expect(c1).toEqual({ number: 1, state: 'PLACED', tableNumber: 2, paymentNumber: 1 });
    expect(o1.rows).toEqual([
      { rowNumber: 1, productId: 'sku-burger', name: 'Burger', quantity: 2, unitPrice: 1290 },
      { rowNumber: 2, productId: 'sku-fries', name: 'Fries', quantity: 1, unitPrice: 450, notes: 'no salt' },
    ]);
  });

  it('PLACED to COMPLETED answers 200 with the order, completeTime set, and it leaves the list', async () => {
    const order = await newOrder();
    const res = await update(order.number, 'COMPLETED');
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ number: order.number, state: 'COMPLETED', orderTime: order.orderTime });
    expect(body.completeTime).toMatch(ISO_MS);
    const list = (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json();
    expect(list.map((r: { number: number }) => r.number)).not.toContain(order.number);
  });

  it('PLACED to ABORTED sets completeTime', async () => {
    const order = await newOrder();
    const body = (await update(order.number, 'ABORTED')).json();
    expect(body.state).toBe('ABORTED');
    expect(body.completeTime).toMatch(ISO_MS);
  });

  it('repeating the current state answers 200 and changes nothing', async () => {
    const order = await newOrder();
    const first = await update(order.number, 'COMPLETED');
    const before = await db.order(locationId, order.number);
    const again = await update(order.number, 'COMPLETED');
    expect(again.status).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect((await db.order(locationId, order.number))!.version).toBe(before!.version);
  });

  it('COMPLETED to ABORTED is a 409 Conflict naming the current state', async () => {
    const order = await newOrder();
    await update(order.number, 'COMPLETED');
    const res = await update(order.number, 'ABORTED');
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Conflict',
      status: 409,
      detail: 'Order is COMPLETED; cannot move to ABORTED',
      instance: `/api/v1/orders/${order.number}/statusupdate`,
    });
    expect(await db.order(locationId, order.number)).toMatchObject({ state: 'COMPLETED', version: 1 });
  });

  it('moving a PLACED order to SELECTING or NEW is a 409', async () => {
    const order = await newOrder();
    expect((await update(order.number, 'SELECTING')).status).toBe(409);
    expect((await update(order.number, 'NEW')).status).toBe(409);
    expect((await db.order(locationId, order.number))!.state).toBe('PLACED');
  });

  it('failures below the threshold go back to PLACED; the third stays FAILED; recovery resets', async () => {
    const order = await newOrder();
    const first = await fail(order.number, 'printer jammed');
    expect(first.status).toBe(200);
    expect(first.json()).toMatchObject({ state: 'PLACED', failedTime: expect.stringMatching(ISO_MS) });
    expect((await db.order(locationId, order.number))!.failureCount).toBe(1);

    const second = await update(order.number, 'FAILED'); // a status update to FAILED is a failure report
    expect(second.json().state).toBe('PLACED');
    expect((await db.order(locationId, order.number))!.failureCount).toBe(2);

    const third = await fail(order.number);
    expect(third.json().state).toBe('FAILED');
    expect((await stack.admin.listOrders(locationId, 'FAILED')).map((o) => o.number)).toContain(order.number);
    const listed = (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json();
    expect(listed.map((r: { number: number }) => r.number)).not.toContain(order.number);

    const fourth = await fail(order.number);
    expect(fourth.status).toBe(200);
    expect(fourth.json()).toEqual(third.json());

    expect((await update(order.number, 'COMPLETED')).status).toBe(409);

    const recovered = await stack.admin.recoverOrder(locationId, order.number);
    expect(recovered.state).toBe('PLACED');
    expect(recovered.orderTime! > order.orderTime!).toBe(true);
    expect((await db.order(locationId, order.number))!.failureCount).toBe(0);
  });

  it('a status update to PLACED on a FAILED order is recovery too', async () => {
    const { location, key: k } = await registerAt(stack, 'Fragile', 1);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const failed = await call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, { apiKey: k });
    expect(failed.json().state).toBe('FAILED');
    const res = await statusUpdate(stack.baseUrl, k, order.number, 'PLACED');
    expect(res.status).toBe(200);
    expect(res.json().state).toBe('PLACED');
    expect(await db.order(location.id, order.number)).toMatchObject({ state: 'PLACED', failureCount: 0 });
  });

  it('recovering an order that is not FAILED is a 409', async () => {
    const order = await newOrder();
    await update(order.number, 'COMPLETED');
    await expect(stack.admin.recoverOrder(locationId, order.number)).rejects.toMatchObject({ status: 409 });
    expect(await db.order(locationId, order.number)).toMatchObject({ state: 'COMPLETED', version: 1 });
  });

  it('admin lists orders by state', async () => {
    const order = await newOrder();
    await update(order.number, 'ABORTED');
    const aborted = await stack.admin.listOrders(locationId, 'ABORTED');
    expect(aborted.map((o) => o.number)).toContain(order.number);
    expect(aborted.every((o) => o.state === 'ABORTED')).toBe(true);
  });
});

describe('isolation between locations', () => {
  const stack = useStack();

  it('numbers run per location, and a session sees and changes only its own location', async () => {
    const a = await registerAt(stack, 'A');
    const b = await registerAt(stack, 'B');
    const orderA = await stack.admin.createOrder(a.location.id, sampleRows);
    const commandA = await stack.admin.createCommand(a.location.id, 'EXPORT_DATA');
    const orderB = await stack.admin.createOrder(b.location.id, sampleRows);
    expect([orderA.number, orderB.number, commandA.number]).toEqual([1, 1, 1]);

    const listB = (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: b.key })).json();
    expect(listB).toEqual([orderB]);

    const orderA2 = await stack.admin.createOrder(a.location.id, sampleRows);
    const crossUpdate = await statusUpdate(stack.baseUrl, b.key, orderA2.number, 'COMPLETED');
    expect(crossUpdate.status).toBe(400);
    expect(crossUpdate.json()).toMatchObject({ title: 'Illegal argument', detail: 'Order does not exist' });

    const crossAck = await call('DELETE', `${stack.baseUrl}/commands/${commandA.number}`, { apiKey: b.key });
    expect(crossAck.status).toBe(404);

    const listA = (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: a.key })).json();
    expect(listA).toEqual([orderA, orderA2, commandA]);
  });
});
