/**
 * Order deadlines (docs/presence-and-deadlines.md) over real HTTP on two API nodes and two
 * workers: an overdue placement announced and counted once, a recovery's new placement counted
 * again, and the auto-abort racing registers' COMPLETED with one winner per order; and a worker
 * killed between the overdue mark and its announcement, whose job run again announces it.
 */
import type { Queue } from 'bullmq';
import Redis from 'ioredis';
import type { OperatorOrderRecord, OrderRecord } from '@pos/shared/domain/records';
import { createLogger } from '@pos/shared/log';
import {
  addOrderDeadlines,
  countOverdueOnce,
  createOrderDeadlineQueue,
  ORDER_DEADLINE_JOB,
  type OrderDeadlineJob,
} from '@pos/shared/queue/order-deadlines';
import { customerAt, listenToLocation, placeOrder } from '../support/customer';
import { Deployment, operatorStream, startDeployment } from '../support/deployment';
import { openDb, registerAt } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { metricValue } from '../support/metrics';
import { streamPath, TestStream } from '../support/sse-client';
import { ChildRole, spawnRole, Stack, startStack } from '../support/stack';
import { eventually, pause } from '../support/wait';

/** The announcements that an order went overdue: PLACED and marked (later events of the order carry the mark too). */
const overdueEvents = (stream: TestStream, number: number) =>
  stream.events.filter((e) => {
    const record = e.event === 'order' ? e.json<OperatorOrderRecord>() : undefined;
    return record?.number === number && record.state === 'PLACED' && record.overdue === true;
  });

describe('ORDER_DEADLINE across two workers', () => {
  let d: Deployment;
  const open: TestStream[] = [];

  let redis: Redis;
  let orderDeadlines: Queue<OrderDeadlineJob>;

  beforeAll(async () => {
    d = await startDeployment({ ORDER_DEADLINE: '1500ms' });
    redis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: null });
    orderDeadlines = createOrderDeadlineQueue(
      redis,
      { prefix: d.env.REDIS_PREFIX!, cluster: false },
      createLogger('silent', 'test'),
    );
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(async () => {
    await orderDeadlines?.close();
    redis?.disconnect();
    await d?.close();
  });

  it('a PLACED order past its deadline is announced overdue to operators once per placement, and counted', async () => {
    const { locationId, key } = await registerAt(d.a, 'late', 3);
    const operator = await operatorStream(d.a.origin, d.env, locationId);
    const register = await TestStream.open(`${d.b.origin}${streamPath}`, { apiKey: key });
    open.push(operator, register);
    await register.preamble();
    // what is published on the location's channel, announcements told apart (operatorOnly)
    const listener = await listenToLocation(d.env.REDIS_PREFIX!, locationId);
    const announcements = () => listener.events.filter((e) => e.type === 'order' && e.operatorOnly === true);
    const counted = await metricValue(d.a.origin, 'pos_orders_overdue_total');
    try {
      const customer = await customerAt(d.b, locationId, 1);
      const order = await placeOrder(customer);
      // a failure below the threshold leaves it PLACED in the same placement: no second deadline
      const failure = await call('POST', `${d.a.baseUrl}/orders/${order.number}/failure`, {
        apiKey: key,
        body: { reason: 'printer' },
      });
      expect(failure.json<OrderRecord>().state).toBe('PLACED');
      // Repeats of the placement's deadline, as a job re-run adds (same id) and, with ids of their
      // own, as if two workers had each added one: the two workers race to mark it.
      const placement = { locationId, orderNumber: order.number, orderTime: Date.parse(order.orderTime!) };
      await addOrderDeadlines(
        orderDeadlines,
        { orderDeadlineMs: 1500, autoAbortAfterMs: undefined },
        { locationId, number: order.number, orderTime: new Date(order.orderTime!) },
        async () => undefined,
      );
      for (const copy of ['a', 'b', 'c']) {
        await orderDeadlines.add(ORDER_DEADLINE_JOB.overdue, placement, {
          jobId: `copy-${copy}-${order.number}`,
          delay: Math.max(0, placement.orderTime + 1500 - Date.now()),
        });
      }

      await eventually(() => overdueEvents(operator, order.number).length > 0, 'the overdue event');
      await eventually(
        async () => ((await orderDeadlines.getJobCounts('completed')).completed ?? 0) >= 4,
        'every copy of the deadline run',
      );
      expect(announcements()).toHaveLength(1);
      const [marked] = overdueEvents(operator, order.number);
      expect(marked!.json()).toMatchObject({
        number: order.number,
        state: 'PLACED',
        failureCount: 1,
        overdue: true,
        orderTime: order.orderTime,
      });
      expect(Date.now() - Date.parse(order.orderTime!)).toBeGreaterThanOrEqual(1500);
      await eventually(
        async () => (await metricValue(d.b.origin, 'pos_orders_overdue_total')) === counted + 1,
        'the overdue count',
      );

      // operators find it; registers' records and streams stay as the interface defines them
      expect((await d.b.admin.listOrders(locationId, 'PLACED', { overdue: true })).map((o) => o.number)).toEqual([
        order.number,
      ]);
      expect(await d.b.admin.listOrders(locationId, 'PLACED', { overdue: false })).toEqual([]);
      const polled = await call('GET', `${d.a.baseUrl}/orders/location?state=PLACED`, { apiKey: key });
      expect(polled.json<OrderRecord[]>()[0]).not.toHaveProperty('overdue');

      // Failed for good, then recovered: a new placement, overdue in its turn, counted again.
      for (let i = 0; i < 2; i++)
        await call('POST', `${d.a.baseUrl}/orders/${order.number}/failure`, { apiKey: key, body: {} });
      // the failure reports of the overdue order reach the register as any do
      await eventually(
        () => register.events.some((e) => e.json<OrderRecord>().state === 'FAILED'),
        'the FAILED order on the register stream',
      );
      const recovered = await d.a.admin.recoverOrder(locationId, order.number);
      expect(recovered.orderTime).not.toBe(order.orderTime);
      expect((await d.a.admin.listOrders(locationId, 'PLACED'))[0]).not.toHaveProperty('overdue');
      await eventually(() => announcements().length > 1, 'the second placement overdue');
      expect(announcements().map((e) => e.type === 'order' && e.record.orderTime)).toEqual([
        order.orderTime,
        recovered.orderTime,
      ]);
      await eventually(
        async () => (await metricValue(d.a.origin, 'pos_orders_overdue_total')) === counted + 2,
        'the second overdue count',
      );
      expect(register.events.some((e) => 'overdue' in e.json<object>())).toBe(false);
      expect(register.events.filter((e) => e.json<OrderRecord>().orderTime === recovered.orderTime)).toHaveLength(1);
    } finally {
      await listener.close();
    }
  });

  it('an order finished in time is never marked', async () => {
    const { locationId, key } = await registerAt(d.a, 'on-time');
    const operator = await operatorStream(d.a.origin, d.env, locationId);
    open.push(operator);
    const quick = await d.a.admin.createOrder(locationId, sampleRows);
    const slow = await d.a.admin.createOrder(locationId, sampleRows);
    expect(
      (
        await call('PUT', `${d.b.baseUrl}/orders/${quick.number}/statusupdate`, {
          apiKey: key,
          body: { newState: 'COMPLETED' },
        })
      ).status,
    ).toBe(200);
    // the slow one, placed with it, going overdue shows the quick one's deadline has passed too
    await eventually(() => overdueEvents(operator, slow.number).length === 1, 'the slow order overdue');
    expect(overdueEvents(operator, quick.number)).toEqual([]);
  });
});

describe('ORDER_AUTO_ABORT_AFTER', () => {
  let d: Deployment;

  beforeAll(async () => {
    d = await startDeployment({ ORDER_AUTO_ABORT_AFTER: '1500ms' });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('aborts a PLACED order left alone: announced to registers, seen ABORTED by its customer', async () => {
    const { locationId, key } = await registerAt(d.a, 'abandoned');
    const register = await TestStream.open(`${d.b.origin}${streamPath}`, { apiKey: key });
    await register.preamble();
    const customer = await customerAt(d.a, locationId, 1);
    const order = await placeOrder(customer);
    await eventually(
      () => register.events.some((e) => e.json<OrderRecord>().state === 'ABORTED'),
      'the abort on the register stream',
    );
    const aborted = register.events.find((e) => e.json<OrderRecord>().state === 'ABORTED')!.json<OrderRecord>();
    expect(aborted).toMatchObject({
      number: order.number,
      state: 'ABORTED',
      orderTime: order.orderTime,
      completeTime: expect.any(String),
    });
    expect(Date.parse(aborted.completeTime!) - Date.parse(order.orderTime!)).toBeGreaterThanOrEqual(1500);
    const seen = await call('GET', `${customer.url}/orders/${order.number}`, { apiKey: customer.key });
    expect(seen.json()).toEqual(aborted);
    register.close();
  });

  it("races registers' COMPLETED: each order ends once, COMPLETED or ABORTED, announced once", async () => {
    const { locationId, key } = await registerAt(d.a, 'race');
    const listener = await listenToLocation(d.env.REDIS_PREFIX!, locationId);
    try {
      const orders: OrderRecord[] = [];
      for (let i = 0; i < 10; i++) orders.push(await d.b.admin.createOrder(locationId, sampleRows));
      // Each register's COMPLETED is sent close to its order's abort, some before, some after:
      // the moment is what this test is about.
      const answers = await Promise.all(
        orders.map(async (order, i) => {
          const due = Date.parse(order.orderTime!) + 1500 + (i - 5) * 25;
          await pause(Math.max(0, due - Date.now()));
          const node = i % 2 === 0 ? d.a : d.b;
          return call('PUT', `${node.baseUrl}/orders/${order.number}/statusupdate`, {
            apiKey: key,
            body: { newState: 'COMPLETED' },
          });
        }),
      );
      const finished = (number: number) =>
        listener.events.filter(
          (e) =>
            e.type === 'order' &&
            e.record.number === number &&
            (e.record.state === 'COMPLETED' || e.record.state === 'ABORTED'),
        );
      await listener.until(() => orders.every((order) => finished(order.number).length > 0));
      for (const [i, order] of orders.entries()) {
        const answer = answers[i]!;
        const [ending, ...more] = finished(order.number);
        if (answer.status === 200) expect(ending!.type === 'order' && ending!.record.state).toBe('COMPLETED');
        else {
          expect(answer.status).toBe(409);
          expect(answer.json().detail).toBe('Order is ABORTED; cannot move to COMPLETED');
          expect(ending!.type === 'order' && ending!.record.state).toBe('ABORTED');
        }
        expect(more).toEqual([]);
      }
      // every order is finished, none twice
      expect(await d.a.admin.listOrders(locationId, 'PLACED')).toEqual([]);
    } finally {
      await listener.close();
    }
  });

  it("a location's own orderDeadline (PATCH) marks its orders overdue where ORDER_DEADLINE is unset", async () => {
    const { locationId } = await registerAt(d.a, 'own-deadline');
    const patched = await d.b.admin.updateLocation(locationId, { orderDeadline: '500ms' });
    expect(patched.orderDeadline).toBe('500ms');
    const operator = await operatorStream(d.a.origin, d.env, locationId);
    const order = await d.a.admin.createOrder(locationId, sampleRows);
    await eventually(() => overdueEvents(operator, order.number).length === 1, 'the overdue event');
    operator.close();
  });
});

describe('a worker that dies between the overdue mark and its announcement', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof openDb>>;
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: null });
    // The API alone here: the workers are children, one to die and one to take over.
    stack = await startStack({ ORDER_DEADLINE: '1s', JOB_LOCK_DURATION: '1s' }, { worker: false });
    db = await openDb(stack.env);
  });
  afterAll(async () => {
    await db?.close();
    redis?.disconnect();
    await stack?.close();
  });

  it('leaves the mark, and the job run again announces and counts it, once', async () => {
    const { location } = await registerAt(stack, 'overdue-crash');
    const listener = await listenToLocation(stack.env.REDIS_PREFIX!, location.id);
    const announcements = () => listener.events.filter((e) => e.type === 'order' && e.operatorOnly === true);
    const counted = await metricValue(stack.origin, 'pos_orders_overdue_total');
    let rescuer: ChildRole | undefined;
    try {
      const order = await stack.admin.createOrder(location.id, sampleRows);
      // The deadline job runs a second after the order's placement: this worker marks it, then dies.
      const doomed = await spawnRole(
        'worker',
        { ...stack.env, FAULT_INJECT: 'crash-after-overdue-mark' },
        { mayDieFirst: true },
      );
      expect({ code: await doomed.exited, signal: doomed.process.signalCode }).toEqual({
        code: null,
        signal: 'SIGKILL',
      });
      expect(await db.order(location.id, order.number)).toMatchObject({ state: 'PLACED', overdue: true, version: 1 });
      expect(announcements()).toEqual([]);

      rescuer = await spawnRole('worker', stack.env);
      await listener.until(() => announcements().length > 0, 15_000);
      await eventually(
        async () => (await metricValue(stack.origin, 'pos_orders_overdue_total')) === counted + 1,
        'the overdue count',
      );
      const queue = createOrderDeadlineQueue(
        redis,
        { prefix: stack.env.REDIS_PREFIX!, cluster: false },
        createLogger('silent', 'test'),
      );
      try {
        await eventually(
          async () => (await queue.getJobCounts('completed')).completed === 1,
          'the deadline job completed',
        );
        // The count is the job's once, whichever of its runs got to it: one more run counts nothing.
        const [job] = await queue.getJobs(['completed']);
        expect(job!.returnvalue).toBe('overdue, announced again');
        await countOverdueOnce(redis, stack.env.REDIS_PREFIX!, job!.id!);
      } finally {
        await queue.close();
      }
      // announced once, the order as marked; counted once
      expect(announcements()).toHaveLength(1);
      expect(announcements()[0]).toMatchObject({
        record: { number: order.number, state: 'PLACED', orderTime: order.orderTime },
        overdue: true,
      });
      expect(await metricValue(stack.origin, 'pos_orders_overdue_total')).toBe(counted + 1);
      expect(await db.order(location.id, order.number)).toMatchObject({ overdue: true, version: 1 });
    } finally {
      await listener.close();
      if (rescuer) expect(await rescuer.stop()).toBe(0);
    }
  });
});
