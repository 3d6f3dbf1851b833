/**
 * Finished orders and unsubmitted ones past SELECTING_TTL (carts, and NEW orders never submitted)
 * leave the hot collection through the lifecycle job (its BullMQ schedule, every second here):
 * late requests about an archived order answer as they did before, the history API pages the
 * archive, and /metrics reports the job.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { OrderRecord } from '@pos/shared/domain/records';
import { historyCursorOf } from '@pos/shared/schemas/history-cursor';
import { customerAt, listenToLocation, placeOrder } from '../support/customer';
import { openDb, registerAt } from '../support/fixtures';
import { adminHeader, call, sampleRows, statusUpdate } from '../support/http';
import { metricValue, Sample, scrapeMetrics, valueOf } from '../support/metrics';
import { ROOT, useStack } from '../support/stack';
import { eventually } from '../support/wait';

type Db = Awaited<ReturnType<typeof openDb>>;

const where = async (db: Db, locationId: string, number: number) => {
  const id = `${locationId}:${number}`;
  const [hot, archived] = await Promise.all([
    db.order(locationId, number),
    db.db.collection('orderArchive').findOne({ _id: id as never }),
  ]);
  return { hot: hot !== null, archived: archived !== null };
};

/** Waits until the orders are in the archive and no longer hot. */
const archivedAll = (db: Db, locationId: string, numbers: number[]) =>
  eventually(
    async () => (await Promise.all(numbers.map((n) => where(db, locationId, n)))).every((w) => w.archived && !w.hot),
    `orders ${numbers.join(', ')} archived`,
    20_000,
  );

const conflict = (detail: string, instance: string) => ({
  type: 'about:blank',
  title: 'Conflict',
  status: 409,
  detail,
  instance,
});

describe('finished orders leave for the archive', () => {
  const stack = useStack({ ORDER_ARCHIVE_AFTER: '0s', LIFECYCLE_INTERVAL: '1s' });
  let db: Db;

  beforeAll(async () => {
    db = await openDb(stack.env);
  });
  afterAll(async () => {
    await db.close();
  });

  it("a register's late status updates and failure reports answer as before archiving; archiving announces nothing", async () => {
    const { location, key } = await registerAt(stack, 'Late register', 3);
    const other = await registerAt(stack, 'Elsewhere');
    const update = (n: number, newState: string, apiKey = key) =>
      call('PUT', `${stack.baseUrl}/orders/${n}/statusupdate`, { apiKey, body: { newState } });
    const fail = (n: number) =>
      call('POST', `${stack.baseUrl}/orders/${n}/failure`, { apiKey: key, body: { reason: 'late' } });

    const a = await stack.admin.createOrder(location.id, sampleRows, 3);
    const b = await stack.admin.createOrder(location.id, sampleRows);
    const events = await listenToLocation(stack.env.REDIS_PREFIX!, location.id);
    const completed = await update(a.number, 'COMPLETED');
    const aborted = await update(b.number, 'ABORTED');
    try {
      expect([completed.status, aborted.status]).toEqual([200, 200]);
      await events.until((e) => e.length >= 2);
      await archivedAll(db, location.id, [a.number, b.number]);
      // The two transitions were announced; moving the orders to the archive was not.
      expect(events.events.map((e) => e.type === 'order' && [e.record.number, e.record.state])).toEqual([
        [a.number, 'COMPLETED'],
        [b.number, 'ABORTED'],
      ]);
    } finally {
      await events.close();
    }

    const path = (n: number, action = 'statusupdate') => `/api/v1/orders/${n}/${action}`;
    // The same state again: 200 with the order exactly as the transition answered it.
    for (const [n, state, before] of [
      [a.number, 'COMPLETED', completed],
      [b.number, 'ABORTED', aborted],
    ] as const) {
      const again = await update(n, state);
      expect([again.status, again.headers.get('content-type'), again.text]).toEqual([
        200,
        'application/json; charset=utf-8',
        before.text,
      ]);
    }

    const answers = await Promise.all([
      update(a.number, 'ABORTED'),
      update(a.number, 'FAILED'),
      update(a.number, 'PLACED'),
      fail(a.number),
      update(b.number, 'COMPLETED'),
    ]);
    expect(answers.map((r) => [r.status, r.headers.get('content-type')])).toEqual(
      Array(5).fill([409, 'application/problem+json']),
    );
    expect(answers.map((r) => r.json())).toEqual([
      conflict('Order is COMPLETED; cannot move to ABORTED', path(a.number)),
      conflict('Order is COMPLETED; cannot report a failure', path(a.number)),
      conflict('Order is COMPLETED; cannot recover', path(a.number)),
      conflict('Order is COMPLETED; cannot report a failure', path(a.number, 'failure')),
      conflict('Order is ABORTED; cannot move to COMPLETED', path(b.number)),
    ]);
    const recovered = await call(
      'POST',
      `${stack.origin}/admin/v1/locations/${location.id}/orders/${a.number}/recover`,
      {
        headers: adminHeader(stack.env),
      },
    );
    expect(recovered.status).toBe(409);
    expect(recovered.json().detail).toBe('Order is COMPLETED; cannot recover');

    // Still scoped by location, and a number never used is still missing.
    for (const res of [await update(a.number, 'COMPLETED', other.key), await update(4242, 'COMPLETED')]) {
      expect(res.status).toBe(400);
      expect(res.json().detail).toBe('Order does not exist');
    }
    // Nothing was written: the archived copies are as they were.
    expect(
      await db.db.collection('orderArchive').findOne({ _id: `${location.id}:${a.number}` as never }),
    ).toMatchObject({ version: 1, state: 'COMPLETED' });
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json()).toEqual([]);
  });

  it("a customer's late reads and moves answer as before archiving", async () => {
    const { location, key } = await registerAt(stack, 'Late customer');
    const alice = await customerAt(stack, location.id, 7, 2);
    const bob = await customerAt(stack, location.id, 8, 3);
    const placed = await placeOrder(alice);
    const done = await statusUpdate(stack.baseUrl, key, placed.number, 'COMPLETED');
    expect(done.status).toBe(200);
    await archivedAll(db, location.id, [placed.number]);

    const read = await call('GET', `${alice.url}/orders/${placed.number}`, { apiKey: alice.key });
    expect([read.status, read.text]).toEqual([200, done.text]);
    const moves = await Promise.all([
      call('POST', `${alice.url}/orders/${placed.number}/finish`, { apiKey: alice.key }),
      call('POST', `${alice.url}/orders/${placed.number}/submit`, { apiKey: alice.key }),
      call('PUT', `${alice.url}/orders/${placed.number}/rows`, { apiKey: alice.key, body: { rows: sampleRows } }),
    ]);
    const instance = (tail: string) => `/api/v1/customer/orders/${placed.number}${tail}`;
    expect(moves.map((r) => [r.status, r.json()])).toEqual([
      [409, conflict('Order is COMPLETED; cannot finish', instance('/finish'))],
      [409, conflict('Order is COMPLETED; cannot submit', instance('/submit'))],
      [409, conflict('Order is COMPLETED; cannot replace rows', instance('/rows'))],
    ]);
    // Another customer's order is still none of Bob's business.
    const peek = await call('GET', `${bob.url}/orders/${placed.number}`, { apiKey: bob.key });
    expect([peek.status, peek.json().detail]).toEqual([400, 'Order does not exist']);
  });

  it("pages a location's archived orders by completion time (API and npm run admin)", async () => {
    const { location, key } = await registerAt(stack, 'History');
    const finished: OrderRecord[] = [];
    for (let i = 0; i < 5; i++) {
      const order = await stack.admin.createOrder(location.id, sampleRows, i + 1);
      const res = await call('PUT', `${stack.baseUrl}/orders/${order.number}/statusupdate`, {
        apiKey: key,
        body: { newState: i === 2 ? 'ABORTED' : 'COMPLETED' },
      });
      finished.push(res.json<OrderRecord>());
    }
    const open = await stack.admin.createOrder(location.id, sampleRows);
    await archivedAll(
      db,
      location.id,
      finished.map((o) => o.number),
    );

    // pages of 2, each full one naming the next in `Link: rel="next"` (an opaque cursor)
    const auth = adminHeader(stack.env);
    const pages: OrderRecord[][] = [];
    for (let next: string | undefined = `/admin/v1/locations/${location.id}/history?limit=2`; next;) {
      const res = await call('GET', `${stack.origin}${next}`, { headers: auth });
      pages.push(res.json<OrderRecord[]>());
      next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1];
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(finished);
    expect(pages.flat().map((o) => o.number)).not.toContain(open.number);
    expect(await stack.admin.orderHistory(location.id, { limit: 2, after: historyCursorOf(finished[1]!) })).toEqual(
      finished.slice(2, 4),
    );

    const range = await stack.admin.orderHistory(location.id, {
      from: finished[1]!.completeTime,
      to: finished[3]!.completeTime,
    });
    expect(range).toEqual(finished.slice(1, 3));

    const cli = await promisify(execFile)(
      process.execPath,
      ['--require', 'tsx/cjs', path.join(ROOT, 'scripts', 'admin.ts'), 'history', location.id, '--all', '--limit', '2'],
      {
        cwd: ROOT,
        env: { ...process.env, POS_URL: stack.origin, ADMIN_TOKEN: stack.env.ADMIN_TOKEN! },
      },
    );
    expect(JSON.parse(cli.stdout)).toEqual(finished);
  });

  it('checks the history query', async () => {
    const { location } = await registerAt(stack, 'History checks');
    const url = (query: string, id = location.id) => `${stack.origin}/admin/v1/locations/${id}/history${query}`;
    const auth = adminHeader(stack.env);
    const empty = await call('GET', url(''), { headers: auth });
    expect([empty.status, empty.json(), empty.headers.get('link')]).toEqual([200, [], null]);
    for (const [query, detail] of [
      ['?limit=0', 'limit must be an integer from 1 to 1000'],
      ['?limit=1001', 'limit must be an integer from 1 to 1000'],
      ['?limit=ten', 'limit must be an integer from 1 to 1000'],
      ['?from=yesterday', 'from must be an ISO-8601 date-time'],
      ['?to=2026-13-01T00:00:00Z', 'to must be an ISO-8601 date-time'],
      ['?after=not-a-cursor', 'after must be the cursor after an order of a previous page'],
    ]) {
      const res = await call('GET', url(query!), { headers: auth });
      expect([res.status, res.json()]).toEqual([
        400,
        {
          type: 'about:blank',
          title: 'Illegal argument',
          status: 400,
          detail,
          instance: `/admin/v1/locations/${location.id}/history`,
        },
      ]);
    }
    expect((await call('GET', url('', 'no-such-location'), { headers: auth })).status).toBe(404);
    expect((await call('GET', url(''))).status).toBe(401);
  });

  it('reports the collections and the runs on /metrics', async () => {
    const { location, key } = await registerAt(stack, 'Metrics');
    const order = await stack.admin.createOrder(location.id, sampleRows);
    await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED');
    await archivedAll(db, location.id, [order.number]);
    // A run's figures are written just after its last batch: wait for the one that moved the order.
    let samples: Sample[] = [];
    const sample = (name: string, labels: Record<string, string> = {}) => valueOf(samples, name, labels);
    await eventually(async () => {
      samples = await scrapeMetrics(stack.origin);
      return (sample('pos_lifecycle_documents_total', { action: 'archived' }) ?? 0) >= 1;
    }, 'the archiving run on /metrics');
    expect(sample('pos_order_documents', { collection: 'orders' })).toBe(
      await db.db.collection('orders').countDocuments(),
    );
    expect(sample('pos_order_documents', { collection: 'orderArchive' })).toBeGreaterThanOrEqual(1);
    expect(sample('pos_lifecycle_runs_total')).toBeGreaterThanOrEqual(1);
    expect(sample('pos_lifecycle_run_seconds_total')).toBeGreaterThan(0);
    for (const action of ['archived', 'expired', 'purged', 'commands_purged']) {
      expect(sample('pos_lifecycle_last_run_documents', { action })).toEqual(expect.any(Number));
    }
    expect(sample('pos_lifecycle_last_run_duration_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample('pos_lifecycle_last_run_complete')).toBe(1);
    expect(sample('pos_lifecycle_last_run_timestamp_seconds')! * 1000).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('abandoned carts expire', () => {
  const stack = useStack({ LIFECYCLE_INTERVAL: '1s' });
  let db: Db;

  beforeAll(async () => {
    db = await openDb(stack.env);
  });
  afterAll(async () => {
    await db.close();
  });

  it('a cart untouched for SELECTING_TTL leaves: to its customer it is a missing order, registers never hear of it; submitted orders stay', async () => {
    const { location, key } = await registerAt(stack, 'Carts');
    const carol = await customerAt(stack, location.id, 9, 4);
    const events = await listenToLocation(stack.env.REDIS_PREFIX!, location.id);
    const create = async () =>
      (
        await call('POST', `${carol.url}/orders`, { apiKey: carol.key, body: { rows: sampleRows } })
      ).json<OrderRecord>();
    const cart = await create();
    const fresh = await create();
    expect((await call('POST', `${carol.url}/orders/${fresh.number}/finish`, { apiKey: carol.key })).json().state).toBe(
      'NEW',
    );
    expect((await call('POST', `${carol.url}/orders/${fresh.number}/submit`, { apiKey: carol.key })).json().state).toBe(
      'PLACED',
    );
    // Both were last written three hours ago (SELECTING_TTL is 2 h).
    const threeHoursAgo = new Date(Date.now() - 3 * 3_600_000);
    const moved = await db.db
      .collection('orders')
      .updateMany(
        { locationId: location.id, number: { $in: [cart.number, fresh.number] } },
        { $set: { updatedAt: threeHoursAgo } },
      );
    expect(moved.modifiedCount).toBe(2);

    await archivedAll(db, location.id, [cart.number]);
    expect(
      await db.db.collection('orderArchive').findOne({ _id: `${location.id}:${cart.number}` as never }),
    ).toMatchObject({
      state: 'SELECTING',
      expiredAt: expect.any(Date),
    });
    const answers = await Promise.all([
      call('GET', `${carol.url}/orders/${cart.number}`, { apiKey: carol.key }),
      call('PUT', `${carol.url}/orders/${cart.number}/rows`, { apiKey: carol.key, body: { rows: sampleRows } }),
      call('POST', `${carol.url}/orders/${cart.number}/finish`, { apiKey: carol.key }),
      call('POST', `${carol.url}/orders/${cart.number}/submit`, { apiKey: carol.key }),
    ]);
    expect(answers.map((r) => [r.status, r.json().detail])).toEqual(Array(4).fill([400, 'Order does not exist']));

    // The submitted order is not a cart: a few runs later it is still hot.
    const runs = () => metricValue(stack.origin, 'pos_lifecycle_runs_total');
    const seen = await runs();
    await eventually(async () => (await runs()) >= seen + 2, 'two more lifecycle runs', 15_000);
    expect(await where(db, location.id, fresh.number)).toEqual({ hot: true, archived: false });

    await events.until((e) => e.length >= 2);
    await events.close();
    // The channel carried the other order's transitions (streams show registers the PLACED one);
    // nothing about the cart, its expiry included.
    expect(events.events.map((e) => e.type === 'order' && [e.record.number, e.record.state])).toEqual([
      [fresh.number, 'NEW'],
      [fresh.number, 'PLACED'],
    ]);
    expect(
      (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json().map((o: OrderRecord) => o.number),
    ).toEqual([fresh.number]);
    expect(await stack.admin.orderHistory(location.id)).toEqual([]);
  });
});

describe('orders finished but never submitted expire', () => {
  const stack = useStack({ LIFECYCLE_INTERVAL: '1s', CUSTOMER_MAX_OPEN_ORDERS: '2' });
  let db: Db;

  beforeAll(async () => {
    db = await openDb(stack.env);
  });
  afterAll(async () => {
    await db.close();
  });

  it('a NEW order untouched for SELECTING_TTL leaves like a cart, and frees its place under the cap; a PLACED one stays', async () => {
    const { location, key } = await registerAt(stack, 'Unsubmitted');
    const dan = await customerAt(stack, location.id, 12, 5);
    const create = async () =>
      (await call('POST', `${dan.url}/orders`, { apiKey: dan.key, body: { rows: sampleRows } })).json<OrderRecord>();
    const walkedAway = await create();
    expect(
      (await call('POST', `${dan.url}/orders/${walkedAway.number}/finish`, { apiKey: dan.key })).json().state,
    ).toBe('NEW');
    const placed = await placeOrder(dan);
    expect((await call('POST', `${dan.url}/orders`, { apiKey: dan.key, body: { rows: sampleRows } })).status).toBe(429);

    // Both were last written three hours ago (SELECTING_TTL is 2 h).
    const threeHoursAgo = new Date(Date.now() - 3 * 3_600_000);
    const moved = await db.db
      .collection('orders')
      .updateMany(
        { locationId: location.id, number: { $in: [walkedAway.number, placed.number] } },
        { $set: { updatedAt: threeHoursAgo } },
      );
    expect(moved.modifiedCount).toBe(2);

    await archivedAll(db, location.id, [walkedAway.number]);
    expect(
      await db.db.collection('orderArchive').findOne({ _id: `${location.id}:${walkedAway.number}` as never }),
    ).toMatchObject({
      state: 'NEW',
      expiredAt: expect.any(Date),
    });
    const answers = await Promise.all([
      call('GET', `${dan.url}/orders/${walkedAway.number}`, { apiKey: dan.key }),
      call('POST', `${dan.url}/orders/${walkedAway.number}/submit`, { apiKey: dan.key }),
    ]);
    expect(answers.map((r) => [r.status, r.json().detail])).toEqual(Array(2).fill([400, 'Order does not exist']));
    expect(await where(db, location.id, placed.number)).toEqual({ hot: true, archived: false });
    expect(
      (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json().map((o: OrderRecord) => o.number),
    ).toEqual([placed.number]);
    // The expired order no longer counts among the session's open orders.
    expect((await call('POST', `${dan.url}/orders`, { apiKey: dan.key, body: { rows: sampleRows } })).status).toBe(201);
    expect(await stack.admin.orderHistory(location.id)).toEqual([]);
  });
});
