/**
 * The lifecycle job against the rest of the service: archiving while registers keep sending
 * status updates and failure reports, and a worker killed between the archive copy and the hot
 * delete. Afterwards every order is in exactly one collection, as the state machine left it.
 */
import type { OrderDoc, OrderRecord } from '@pos/shared/domain/records';
import { openDb, registerAt } from '../support/fixtures';
import { call, HttpResult, sampleRows } from '../support/http';
import { spawnRole, startStack, useStack } from '../support/stack';
import { eventually } from '../support/wait';

type Db = Awaited<ReturnType<typeof openDb>>;

async function placement(db: Db, locationId: string) {
  const filter = { locationId };
  const [hot, archived] = await Promise.all([
    db.db.collection<OrderDoc>('orders').find(filter).toArray(),
    db.db.collection<OrderDoc>('orderArchive').find(filter).toArray(),
  ]);
  return { hot, archived };
}

describe('archiving under concurrent updates', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let db: Db;

  beforeAll(async () => {
    // Archiving is tested here, not admission: a loaded machine's slow worker must not shed (docs/overload.md).
    stack = await startStack({ ORDER_ARCHIVE_AFTER: '0s', LIFECYCLE_INTERVAL: '1s', QUEUE_WAIT_TARGET: '4s' });
    db = await openDb(stack.env);
  });
  afterAll(async () => {
    await db.close();
    await stack.close();
  });

  it('status updates and failure reports before, during and after the move: nothing lost, nothing in both, every answer as before', async () => {
    const { location, key } = await registerAt(stack, 'Busy', 1000);
    const ORDERS = 24;
    const orders = [];
    for (let i = 0; i < ORDERS; i++) orders.push(await stack.admin.createOrder(location.id, sampleRows));
    const update = (n: number, newState: string) =>
      call('PUT', `${stack.baseUrl}/orders/${n}/statusupdate`, { apiKey: key, body: { newState } });
    const fail = (n: number) => call('POST', `${stack.baseUrl}/orders/${n}/failure`, { apiKey: key, body: {} });
    const archived = async (n: number) =>
      (await db.db.collection('orderArchive').countDocuments({ _id: `${location.id}:${n}` as never })) === 1;

    const outcomes = await Promise.all(
      orders.map(async (order, i) => {
        const failures = i % 4;
        const final = i % 3 === 0 ? 'ABORTED' : 'COMPLETED';
        const other = final === 'ABORTED' ? 'COMPLETED' : 'ABORTED';
        for (let f = 0; f < failures; f++) expect((await fail(order.number)).status).toBe(200);
        const finished = await update(order.number, final);
        expect(finished.status).toBe(200);
        // Late requests until the order has been archived, and a round after that.
        const late: HttpResult[][] = [];
        for (let after = 0; after < 2;) {
          if (await archived(order.number)) after++;
          late.push(await Promise.all([update(order.number, final), fail(order.number), update(order.number, other)]));
        }
        return { order, failures, final, other, finished: finished.json<OrderRecord>(), late };
      }),
    );

    for (const { order, final, other, finished, late } of outcomes) {
      for (const [same, failure, move] of late) {
        expect([same!.status, same!.json()]).toEqual([200, finished]);
        expect([failure!.status, failure!.json().detail]).toEqual([409, `Order is ${final}; cannot report a failure`]);
        expect([move!.status, move!.json().detail]).toEqual([409, `Order is ${final}; cannot move to ${other}`]);
      }
      expect(finished).toMatchObject({ number: order.number, state: final });
    }

    await eventually(async () => (await placement(db, location.id)).hot.length === 0, 'every order archived', 20_000);
    const { archived: copies } = await placement(db, location.id);
    expect(copies.map((c) => c.number).sort((a, b) => a - b)).toEqual(orders.map((o) => o.number));
    for (const { order, failures, final } of outcomes) {
      const copy = copies.find((c) => c.number === order.number)!;
      // Each failure report and the final move applied once; nothing after them.
      expect(copy).toMatchObject({ state: final, failureCount: failures, version: failures + 1 });
      expect(copy.appliedJobs).toHaveLength(failures + 1);
    }
  });
});

describe('a worker killed between the archive copy and the hot delete', () => {
  const stack = useStack({ JOB_LOCK_DURATION: '1s', LIFECYCLE_INTERVAL: '1s' }, { worker: false });
  let db: Db;

  beforeAll(async () => {
    db = await openDb(stack.env);
  });
  afterAll(async () => {
    await db.close();
  });

  it('leaves the batch in both collections, and the next worker finishes the run: nothing lost, nothing in both', async () => {
    const { location, key } = await registerAt(stack, 'Crash mid-archive');
    // Orders finished by a worker that does not archive yet (ORDER_ARCHIVE_AFTER 1h).
    const serving = await spawnRole('worker', { ...stack.env, ORDER_ARCHIVE_AFTER: '1h' });
    const ORDERS = 30;
    for (let i = 0; i < ORDERS; i++) {
      const order = await stack.admin.createOrder(location.id, sampleRows);
      const res = await call('PUT', `${stack.baseUrl}/orders/${order.number}/statusupdate`, {
        apiKey: key,
        body: { newState: i % 2 ? 'COMPLETED' : 'ABORTED' },
      });
      expect(res.status).toBe(200);
    }
    expect(await serving.stop()).toBe(0);
    const before = (await placement(db, location.id)).hot;
    expect(before).toHaveLength(ORDERS);

    // The lifecycle job is due every second: the doomed worker may take it, and die, before its ready line.
    const doomed = await spawnRole(
      'worker',
      { ...stack.env, ORDER_ARCHIVE_AFTER: '0s', FAULT_INJECT: 'crash-mid-archive' },
      { mayDieFirst: true },
    );
    const code = await doomed.exited;
    expect({ code, signal: doomed.process.signalCode }).toEqual({ code: null, signal: 'SIGKILL' });
    const midway = await placement(db, location.id);
    // The copies were written, the hot documents not yet deleted.
    expect([midway.hot.length, midway.archived.length]).toEqual([ORDERS, ORDERS]);

    const rescuer = await spawnRole('worker', { ...stack.env, ORDER_ARCHIVE_AFTER: '0s' });
    try {
      await eventually(
        async () => (await placement(db, location.id)).hot.length === 0,
        'the hot collection emptied',
        30_000,
      );
      const after = await placement(db, location.id);
      expect(after.archived).toHaveLength(ORDERS);
      // The copies are the orders as they were, but for the events they held
      // (and their due time), which the relay moves.
      const withoutOutbox = ({ outbox: _events, outboxCount: _count, outboxDue: _due, ...doc }: OrderDoc) => doc;
      for (const original of before) {
        const { archivedAt, purgeAt, ...copy } = after.archived.find((c) => c._id === original._id) as OrderDoc & {
          archivedAt: Date;
          purgeAt: Date;
        };
        expect(withoutOutbox(copy)).toEqual(withoutOutbox(original));
        expect(purgeAt.getTime()).toBeGreaterThan(archivedAt.getTime());
      }
      // Every order's final event was relayed, from the hot document or its archived copy, once.
      const finalEvents = () =>
        db.db
          .collection('events')
          .countDocuments({ locationId: location.id, type: { $in: ['order.completed', 'order.aborted'] } });
      await eventually(async () => (await finalEvents()) === ORDERS, 'every final event relayed', 10_000);
    } finally {
      expect(await rescuer.stop()).toBe(0);
    }
  });
});
