/**
 * The whole life of an order through this service, over real HTTP: a customer app creates,
 * edits, finishes and submits it; a register completes, aborts or fails it; an operator recovers it.
 */
import { MongoClient } from 'mongodb';
import type { OrderDoc, OrderRecord } from '@pos/shared/domain/records';
import { Customer, customerAt, listenToLocation, placeOrder } from '../support/customer';
import { call, sampleRows } from '../support/http';
import { useStack } from '../support/stack';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const otherRows = [{ productId: 'sku-salad', name: 'Salad', quantity: 3, unitPrice: 890, notes: 'dressing aside' }];

describe('customer app flow', () => {
  const stack = useStack();
  let mongo: MongoClient;
  let locationId: string;
  let registerKey: string;
  let alice: Customer;

  const list = async (key = registerKey) => {
    const res = await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key });
    expect(res.status).toBe(200);
    return res.json<OrderRecord[]>();
  };
  const status = (number: number, newState: string) =>
    call('PUT', `${stack.baseUrl}/orders/${number}/statusupdate`, { apiKey: registerKey, body: { newState } });

  beforeAll(async () => {
    mongo = await new MongoClient(stack.env.MONGO_URL!).connect();
    const location = await stack.admin.createLocation('Customer flow', 2);
    locationId = location.id;
    registerKey = (await stack.admin.createServiceSession(locationId, 'reg-1')).apiKey;
    alice = await customerAt(stack, locationId, 42, 7);
  });
  afterAll(async () => {
    await mongo?.close();
  });

  it('SELECTING → NEW → PLACED → COMPLETED, invisible to registers until submitted, announced on submit', async () => {
    const events = await listenToLocation(stack.env.REDIS_PREFIX!, locationId);
    try {
      const created = await call('POST', `${alice.url}/orders`, { apiKey: alice.key, body: { rows: sampleRows } });
      expect(created.status).toBe(201);
      expect(created.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const order = created.json<OrderRecord>();
      expect(order).toEqual({
        number: order.number,
        state: 'SELECTING',
        tableNumber: 7,
        userNumber: 42,
        guestCount: 1,
        rows: sampleRows.map((row, i) => ({ rowNumber: i + 1, ...row })),
      });
      expect(created.text).not.toContain('null');
      expect(await list()).toEqual([]);

      const read = await call('GET', `${alice.url}/orders/${order.number}`, { apiKey: alice.key });
      expect(read.status).toBe(200);
      expect(read.json()).toEqual(order);

      const replaced = await call('PUT', `${alice.url}/orders/${order.number}/rows`, {
        apiKey: alice.key,
        body: { rows: otherRows },
      });
      expect(replaced.status).toBe(200);
      expect(replaced.json()).toEqual({ ...order, rows: [{ rowNumber: 1, ...otherRows[0] }] });

      const finished = await call('POST', `${alice.url}/orders/${order.number}/finish`, { apiKey: alice.key });
      expect(finished.status).toBe(200);
      expect(finished.json()).toEqual({ ...replaced.json(), state: 'NEW' });
      expect(await list()).toEqual([]);
      // Finishing twice changes nothing.
      const again = await call('POST', `${alice.url}/orders/${order.number}/finish`, { apiKey: alice.key });
      expect(again.status).toBe(200);
      expect(again.json()).toEqual(finished.json());

      const late = await call('PUT', `${alice.url}/orders/${order.number}/rows`, {
        apiKey: alice.key,
        body: { rows: sampleRows },
      });
      expect(late.status).toBe(409);
      expect(late.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(late.json()).toEqual({
        type: 'about:blank',
        title: 'Conflict',
        status: 409,
        detail: 'Order is NEW; cannot replace rows',
        instance: `/api/v1/customer/orders/${order.number}/rows`,
      });

      const submitted = await call('POST', `${alice.url}/orders/${order.number}/submit`, { apiKey: alice.key });
      expect(submitted.status).toBe(200);
      const placed = submitted.json<OrderRecord>();
      expect(placed.state).toBe('PLACED');
      expect(placed.orderTime).toMatch(ISO);
      expect(placed.rows).toEqual([{ rowNumber: 1, ...otherRows[0] }]);
      expect(await list()).toEqual([placed]);
      await events.until((e) =>
        e.some((x) => x.type === 'order' && x.record.number === order.number && x.record.state === 'PLACED'),
      );

      // Submitting twice changes nothing; finishing a PLACED order is a conflict.
      const resubmit = await call('POST', `${alice.url}/orders/${order.number}/submit`, { apiKey: alice.key });
      expect(resubmit.json()).toEqual(placed);
      const refinish = await call('POST', `${alice.url}/orders/${order.number}/finish`, { apiKey: alice.key });
      expect(refinish.status).toBe(409);
      expect(refinish.json().detail).toBe('Order is PLACED; cannot finish');

      const done = await status(order.number, 'COMPLETED');
      expect(done.status).toBe(200);
      expect(done.json()).toEqual({ ...placed, state: 'COMPLETED', completeTime: done.json().completeTime });
      expect(done.json().completeTime).toMatch(ISO);
      expect(await list()).toEqual([]);
      expect((await call('GET', `${alice.url}/orders/${order.number}`, { apiKey: alice.key })).json().state).toBe(
        'COMPLETED',
      );
    } finally {
      await events.close();
    }
  });

  it('submitting a SELECTING order (not finished) is a conflict', async () => {
    const created = await call('POST', `${alice.url}/orders`, { apiKey: alice.key, body: { rows: sampleRows } });
    const submit = await call('POST', `${alice.url}/orders/${created.json().number}/submit`, { apiKey: alice.key });
    expect(submit.status).toBe(409);
    expect(submit.json()).toMatchObject({ title: 'Conflict', detail: 'Order is SELECTING; cannot submit' });
    expect((await call('GET', `${alice.url}/orders/${created.json().number}`, { apiKey: alice.key })).json()).toEqual(
      created.json(),
    );
  });

  it('PLACED → ABORTED by the register', async () => {
    const placed = await placeOrder(alice);
    const aborted = await status(placed.number, 'ABORTED');
    expect(aborted.status).toBe(200);
    expect(aborted.json()).toMatchObject({ number: placed.number, state: 'ABORTED', userNumber: 42 });
    expect(aborted.json().completeTime).toMatch(ISO);
    expect((await list()).map((o) => o.number)).not.toContain(placed.number);
    // The customer cannot move it any further.
    const submit = await call('POST', `${alice.url}/orders/${placed.number}/submit`, { apiKey: alice.key });
    expect(submit.status).toBe(409);
  });

  it('failure reports: back to PLACED below the threshold, FAILED at it, PLACED again after recovery, then COMPLETED', async () => {
    const placed = await placeOrder(alice);
    const first = await call('POST', `${stack.baseUrl}/orders/${placed.number}/failure`, {
      apiKey: registerKey,
      body: { reason: 'printer jam' },
    });
    expect(first.status).toBe(200);
    expect(first.json().state).toBe('PLACED');
    expect(first.json().failedTime).toMatch(ISO);
    expect((await list()).map((o) => o.number)).toContain(placed.number);

    const second = await status(placed.number, 'FAILED');
    expect(second.status).toBe(200);
    expect(second.json().state).toBe('FAILED');
    expect((await list()).map((o) => o.number)).not.toContain(placed.number);
    expect((await stack.admin.listOrders(locationId, 'FAILED')).map((o) => o.number)).toContain(placed.number);

    const recovered = await stack.admin.recoverOrder(locationId, placed.number);
    expect(recovered.state).toBe('PLACED');
    expect(Date.parse(recovered.orderTime!)).toBeGreaterThanOrEqual(Date.parse(placed.orderTime!));
    const doc = await mongo
      .db(stack.env.MONGO_DB)
      .collection<OrderDoc>('orders')
      .findOne({ _id: `${locationId}:${placed.number}` });
    expect(doc?.failureCount).toBe(0);
    expect((await list()).map((o) => o.number)).toContain(placed.number);

    const done = await status(placed.number, 'COMPLETED');
    expect(done.json().state).toBe('COMPLETED');
  });

  it('takes the table from the session (a body may repeat it), else none', async () => {
    const withBody = await call('POST', `${alice.url}/orders`, {
      apiKey: alice.key,
      body: { rows: sampleRows, tableNumber: 7 },
    });
    expect(withBody.json().tableNumber).toBe(7);
    const takeout = await customerAt(stack, locationId, 43);
    const noTable = await call('POST', `${takeout.url}/orders`, { apiKey: takeout.key, body: { rows: sampleRows } });
    expect(noTable.status).toBe(201);
    expect(noTable.json()).not.toHaveProperty('tableNumber');
    expect(noTable.json().userNumber).toBe(43);
  });

  it('creates READ_TABLE_STATE and REQUEST_BILL commands that registers see and acknowledge', async () => {
    const read = await call('POST', `${alice.url}/commands`, { apiKey: alice.key, body: { kind: 'READ_TABLE_STATE' } });
    expect(read.status).toBe(201);
    expect(read.json()).toEqual({ number: read.json().number, state: 'PLACED', tableNumber: 7, readTableState: true });
    const bill = await call('POST', `${alice.url}/commands`, {
      apiKey: alice.key,
      body: { kind: 'REQUEST_BILL', tableNumber: 7 },
    });
    expect(bill.status).toBe(201);
    expect(bill.json()).toEqual({ number: read.json().number + 1, state: 'PLACED', tableNumber: 7, paymentNumber: 1 });
    const work = await list();
    expect(work.slice(-2)).toEqual([read.json(), bill.json()]);
    for (const command of [read.json(), bill.json()]) {
      expect(
        (await call('DELETE', `${stack.baseUrl}/commands/${command.number}`, { apiKey: registerKey })).status,
      ).toBe(200);
    }
  });

  it("another customer's order answers like a missing one, in every customer operation", async () => {
    const placed = await placeOrder(alice);
    const selecting = (
      await call('POST', `${alice.url}/orders`, { apiKey: alice.key, body: { rows: sampleRows } })
    ).json<OrderRecord>();
    const bob = await customerAt(stack, locationId, 50, 7);
    const elsewhere = await stack.admin.createLocation('Elsewhere');
    const carol = await customerAt(stack, elsewhere.id, 42, 7);
    const missing = {
      type: 'about:blank',
      title: 'Illegal argument',
      status: 400,
      detail: 'Order does not exist',
    };
    for (const stranger of [bob, carol]) {
      for (const number of [placed.number, selecting.number, 999_999]) {
        const attempts = [
          call('GET', `${stranger.url}/orders/${number}`, { apiKey: stranger.key }),
          call('PUT', `${stranger.url}/orders/${number}/rows`, { apiKey: stranger.key, body: { rows: otherRows } }),
          call('POST', `${stranger.url}/orders/${number}/finish`, { apiKey: stranger.key }),
          call('POST', `${stranger.url}/orders/${number}/submit`, { apiKey: stranger.key }),
        ];
        for (const res of await Promise.all(attempts)) {
          expect(res.status).toBe(400);
          expect(res.json()).toMatchObject(missing);
        }
      }
    }
    // Nothing changed.
    const stillSelecting = await call('GET', `${alice.url}/orders/${selecting.number}`, { apiKey: alice.key });
    expect(stillSelecting.json()).toEqual(selecting);
    expect((await list()).find((o) => o.number === placed.number)).toEqual(placed);
  });

  it('keys of the wrong type get the JSON 401; no key the text/plain one', async () => {
    const serviceOnCustomer = await call('POST', `${alice.url}/orders`, {
      apiKey: registerKey,
      body: { rows: sampleRows },
    });
    expect(serviceOnCustomer.status).toBe(401);
    expect(serviceOnCustomer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(serviceOnCustomer.text).toBe('{"message":"Unauthorized","uid":null}');
    const customerOnService = await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: alice.key });
    expect(customerOnService.status).toBe(401);
    expect(customerOnService.text).toBe('{"message":"Unauthorized","uid":null}');
    const none = await call('DELETE', `${alice.url}/session`);
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(none.text).toBe('{"error":"Session not valid"}');
  });

  it('replaces rows under concurrency: each write is version-guarded, losers re-read, none is lost', async () => {
    const order = (
      await call('POST', `${alice.url}/orders`, { apiKey: alice.key, body: { rows: sampleRows } })
    ).json<OrderRecord>();
    const bodies = [1, 2, 3, 4, 5].map((q) => ({
      rows: [{ productId: `sku-${q}`, name: `Item ${q}`, quantity: q, unitPrice: 100 * q }],
    }));
    const answers = await Promise.all(
      bodies.map((body) => call('PUT', `${alice.url}/orders/${order.number}/rows`, { apiKey: alice.key, body })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const doc = await mongo
      .db(stack.env.MONGO_DB)
      .collection<OrderDoc>('orders')
      .findOne({ _id: `${locationId}:${order.number}` });
    expect(doc?.version).toBe(5);
    expect(bodies.map((b) => b.rows[0]!.productId)).toContain(doc?.rows[0]?.productId);

    // A replacement racing the finish either lands before it or answers 409; never after it.
    const [rows, finish] = await Promise.all([
      call('PUT', `${alice.url}/orders/${order.number}/rows`, { apiKey: alice.key, body: { rows: otherRows } }),
      call('POST', `${alice.url}/orders/${order.number}/finish`, { apiKey: alice.key }),
    ]);
    expect(finish.status).toBe(200);
    const final = (await call('GET', `${alice.url}/orders/${order.number}`, { apiKey: alice.key })).json<OrderRecord>();
    expect(final.state).toBe('NEW');
    if (rows.status === 200) expect(final.rows[0]!.productId).toBe('sku-salad');
    else {
      expect(rows.status).toBe(409);
      expect(final.rows[0]!.productId).toBe(doc?.rows[0]?.productId);
    }
  });
});
