/**
 * The worker's handlers with a fake job context (in-memory stand-ins for the repository calls):
 * how applyOrderAction uses the state machine (read, decide, version-guarded write, announce),
 * the session close, and the dispatch by job name.
 */
import { problems } from '@pos/shared/domain/problem';
import { checkJob } from '@pos/shared/queue/job-schemas';
import { JOB, type OrderActionJob } from '@pos/shared/queue/jobs';
import { JobHandlers, runJob } from '@pos/worker/transitions/handlers';
import { applyOrderAction } from '@pos/worker/transitions/order-action';
import { OrderCache } from '@pos/worker/transitions/order-cache';
import { closeSession } from '@pos/worker/transitions/session-close';
import { fakeJobContext, LOCATION, orderDoc } from '../support/fake-job-context';

const status = (orderNumber: number, newState: 'COMPLETED' | 'ABORTED' | 'FAILED' | 'PLACED'): OrderActionJob => ({
  scope: { locationId: LOCATION },
  orderNumber,
  action: { kind: 'status', newState },
});

describe('applyOrderAction', () => {
  it('reads, decides, writes once guarded by the version read, and announces the order', async () => {
    const ctx = fakeJobContext({ jobId: 'job-7' });
    ctx.orders.put(orderDoc(1));
    const outcome = await applyOrderAction(ctx, status(1, 'COMPLETED'));
    expect(outcome).toMatchObject({ status: 200, body: { number: 1, state: 'COMPLETED' } });
    expect(ctx.orders.stored(1)).toMatchObject({ state: 'COMPLETED', version: 1, appliedJobs: ['job-7'] });
    expect(ctx.orders.calls).toEqual({ find: 1, applyChange: 1 });
    expect(ctx.published).toMatchObject([{ type: 'order', record: { number: 1, state: 'COMPLETED' }, version: 1 }]);
    expect(ctx.passed).toEqual(['before-apply', 'after-apply']);
  });

  it('answers the state machine: 200 unchanged without a write, 409 for a move it refuses, 400 for no order', async () => {
    const ctx = fakeJobContext();
    ctx.orders.put(orderDoc(1, { state: 'COMPLETED', completeTime: new Date() }));
    expect(await applyOrderAction(ctx, status(1, 'COMPLETED'))).toMatchObject({
      status: 200,
      body: { state: 'COMPLETED' },
    });
    expect(await applyOrderAction(ctx, status(1, 'ABORTED'))).toEqual({
      status: 409,
      problem: problems.conflict('Order is COMPLETED; cannot move to ABORTED'),
    });
    expect(await applyOrderAction(ctx, status(2, 'COMPLETED'))).toEqual({
      status: 400,
      problem: problems.orderNotFound(),
    });
    expect(ctx.orders.calls.applyChange).toBe(0);
    expect(ctx.published).toEqual([]);
  });

  it('decides a failure report with the location threshold read for it: back to PLACED below it, FAILED at it', async () => {
    const ctx = fakeJobContext({ threshold: 2 });
    ctx.orders.put(orderDoc(1));
    const failure: OrderActionJob = {
      scope: { locationId: LOCATION },
      orderNumber: 1,
      action: { kind: 'failure', reason: 'jam' },
    };
    expect(await applyOrderAction(ctx, failure)).toMatchObject({ status: 200, body: { state: 'PLACED' } });
    expect(ctx.orders.stored(1)?.failureCount).toBe(1);
    expect(await applyOrderAction({ ...ctx, jobId: 'job-2' }, failure)).toMatchObject({
      status: 200,
      body: { state: 'FAILED' },
    });
    expect(ctx.orders.stored(1)).toMatchObject({ state: 'FAILED', failureCount: 2 });
  });

  it('decides again on a fresh read when another write moved the version on', async () => {
    const ctx = fakeJobContext();
    ctx.orders.put(orderDoc(1));
    let raced = false;
    ctx.orders.beforeWrite = (stored) => {
      if (raced) return;
      raced = true;
      stored.version += 1; // another worker's write (say, a failure report) landed first
      stored.failureCount = 1;
    };
    expect(await applyOrderAction(ctx, status(1, 'COMPLETED'))).toMatchObject({
      status: 200,
      body: { state: 'COMPLETED' },
    });
    expect(ctx.orders.stored(1)).toMatchObject({ state: 'COMPLETED', version: 2, failureCount: 1 });
    expect(ctx.orders.calls).toEqual({ find: 2, applyChange: 2 });
  });

  it('gives up with 409 after losing the race every time', async () => {
    const ctx = fakeJobContext();
    ctx.orders.put(orderDoc(1));
    ctx.orders.beforeWrite = (stored) => void (stored.version += 1);
    expect(await applyOrderAction(ctx, status(1, 'COMPLETED'))).toEqual({
      status: 409,
      problem: problems.concurrentModification(),
    });
    expect(ctx.orders.stored(1)?.state).toBe('PLACED');
  });

  it('writes nothing for a job it finds already applied, or that answered before, and announces the order again', async () => {
    const applied = fakeJobContext({ jobId: 'job-3' });
    applied.orders.put(orderDoc(1, { state: 'COMPLETED', appliedJobs: ['job-3'], version: 4 }));
    expect(await applyOrderAction(applied, status(1, 'ABORTED'))).toMatchObject({
      status: 200,
      body: { state: 'COMPLETED' },
    });
    expect(applied.orders.calls.applyChange).toBe(0);
    expect(applied.published).toMatchObject([{ type: 'order', record: { number: 1, state: 'COMPLETED' }, version: 4 }]);

    const answered = fakeJobContext({ answered: true });
    answered.orders.put(orderDoc(1));
    expect(await applyOrderAction(answered, status(1, 'COMPLETED'))).toMatchObject({
      status: 200,
      body: { state: 'PLACED' },
    });
    expect(answered.orders.calls.applyChange).toBe(0);
  });

  it('applies nothing after the waiting request gave up (its deadline passed): 503', async () => {
    const ctx = fakeJobContext();
    ctx.orders.put(orderDoc(1));
    const outcome = await applyOrderAction(ctx, { ...status(1, 'COMPLETED'), deadline: Date.now() - 1 });
    expect(outcome).toMatchObject({ status: 503, problem: { title: 'Service unavailable' } });
    // and when the worker knows the order (no read before its write)
    ctx.orderCache.set(orderDoc(1));
    expect(await applyOrderAction(ctx, { ...status(1, 'COMPLETED'), deadline: Date.now() - 1 })).toMatchObject({
      status: 503,
    });
    expect(ctx.orders.calls.applyChange).toBe(0);
    expect(ctx.orders.stored(1)?.state).toBe('PLACED');
  });

  it("leaves its write's events in the order's outbox for the relay, and a run again that finds its write writes nothing", async () => {
    const ctx = fakeJobContext({ jobId: 'job-1' });
    ctx.orders.put(orderDoc(1));
    await applyOrderAction(ctx, { scope: { locationId: LOCATION }, orderNumber: 1, action: { kind: 'failure' } });
    const first = ctx.orders.stored(1)!;
    const events = Object.keys(first.outbox ?? {});
    expect(events.length).toBeGreaterThan(0);
    expect(first.outboxCount).toBe(events.length);
    expect(first.outboxDue).toBeUndefined();

    await applyOrderAction(
      { ...ctx, runBefore: true },
      { scope: { locationId: LOCATION }, orderNumber: 1, action: { kind: 'failure' } },
    );
    expect(ctx.orders.calls.applyChange).toBe(1);
    await applyOrderAction({ ...ctx, jobId: 'job-2', orderCache: new OrderCache() }, status(1, 'COMPLETED'));
    const after = ctx.orders.stored(1)!;
    // the relay has not run: the first write's events wait beside the second's
    expect(Object.keys(after.outbox ?? {}).filter((id) => events.includes(id))).toEqual(events);
    expect(after.outboxCount).toBe(Object.keys(after.outbox ?? {}).length);
  });

  it('tries an order it has cached with the write alone; a stale guess costs a read', async () => {
    const ctx = fakeJobContext();
    ctx.orders.put(orderDoc(1), orderDoc(2));
    await applyOrderAction(ctx, { scope: { locationId: LOCATION }, orderNumber: 1, action: { kind: 'failure' } });
    expect(ctx.orders.calls).toEqual({ find: 1, applyChange: 1 });
    await applyOrderAction({ ...ctx, jobId: 'job-2' }, status(1, 'COMPLETED'));
    expect(ctx.orders.calls).toEqual({ find: 1, applyChange: 2 });
    expect(ctx.orders.stored(1)?.state).toBe('COMPLETED');

    // order 2 cached, then written by another worker: the guarded write fails, the order is read
    await applyOrderAction(
      { ...ctx, jobId: 'job-3' },
      { scope: { locationId: LOCATION }, orderNumber: 2, action: { kind: 'failure' } },
    );
    ctx.orders.stored(2)!.version += 1;
    await applyOrderAction({ ...ctx, jobId: 'job-4' }, status(2, 'ABORTED'));
    expect(ctx.orders.calls).toEqual({ find: 3, applyChange: 5 });
    expect(ctx.orders.stored(2)?.state).toBe('ABORTED');
  });

  it('answers an archived order as before it moved, and never writes it', async () => {
    const ctx = fakeJobContext();
    ctx.archive.put(orderDoc(1, { state: 'COMPLETED', completeTime: new Date() }));
    expect(await applyOrderAction(ctx, status(1, 'COMPLETED'))).toMatchObject({
      status: 200,
      body: { state: 'COMPLETED' },
    });
    expect(await applyOrderAction(ctx, status(1, 'ABORTED'))).toMatchObject({ status: 409 });
    expect(ctx.orders.calls.applyChange).toBe(0);
    expect(ctx.orderCache.get({ locationId: LOCATION }, 1)).toBeUndefined();
  });

  it("refuses a customer's submit once the order's session is closed", async () => {
    const ctx = fakeJobContext();
    ctx.sessions.put({
      _id: 's-1',
      type: 'CUSTOMER',
      locationId: LOCATION,
      keyHash: 'h',
      createdAt: new Date(),
      closedAt: new Date(),
    });
    ctx.orders.put(orderDoc(1, { state: 'NEW', sessionId: 's-1', orderTime: undefined }));
    const submit: OrderActionJob = {
      scope: { locationId: LOCATION, sessionId: 's-1' },
      orderNumber: 1,
      action: { kind: 'submit' },
    };
    expect(await applyOrderAction(ctx, submit)).toEqual({
      status: 409,
      problem: problems.conflict('Session is closed; cannot submit'),
    });
    expect(ctx.orders.stored(1)?.state).toBe('NEW');
  });
});

describe('closeSession', () => {
  it("closes the session, aborts its PLACED orders, moves its open ones' versions on, and tells the nodes", async () => {
    const ctx = fakeJobContext();
    ctx.sessions.put({ _id: 's-1', type: 'CUSTOMER', locationId: LOCATION, keyHash: 'h', createdAt: new Date() });
    ctx.orders.put(orderDoc(1, { sessionId: 's-1' }), orderDoc(2, { state: 'NEW', sessionId: 's-1' }), orderDoc(3));
    expect(await closeSession(ctx, { sessionId: 's-1' })).toEqual({ status: 204 });
    expect(await ctx.sessions.isOpen('s-1')).toBe(false);
    expect(ctx.orders.stored(1)?.state).toBe('ABORTED');
    expect(ctx.orders.stored(2)).toMatchObject({ state: 'NEW', version: 1 });
    expect(ctx.orders.stored(3)?.state).toBe('PLACED');
    expect(ctx.sessionChanges).toEqual([JSON.stringify({ sessionId: 's-1' })]);
    expect(ctx.published.map((event) => event.type)).toEqual(['order', 'session-closed']);
    expect(await closeSession(ctx, { sessionId: 's-2' })).toMatchObject({ status: 404 });
  });
});

describe('the job dispatch', () => {
  it('runs a checked job with the handler of its name, given the data of that name', async () => {
    const ran: string[] = [];
    const handlers: JobHandlers = {
      [JOB.orderAction]: async (_ctx, data) => (
        ran.push(`order ${data.orderNumber} ${data.action.kind}`),
        { status: 204 }
      ),
      [JOB.sessionClose]: async (_ctx, data) => (ran.push(`close ${data.sessionId}`), { status: 204 }),
    };
    const ctx = fakeJobContext();
    for (const [name, data] of [
      [JOB.sessionClose, { sessionId: 's-1' }],
      [JOB.orderAction, status(4, 'COMPLETED')],
    ] as const) {
      const job = checkJob(name, data);
      if (typeof job === 'string') throw new Error(job);
      await runJob(ctx, job, handlers);
    }
    expect(ran).toEqual(['close s-1', 'order 4 status']);
  });

  it('checks the data first: what breaks the contract never reaches a handler', () => {
    expect(checkJob(JOB.sessionClose, { sessionId: { $ne: null } })).toBe('/sessionId must be string');
    expect(checkJob('order-erase', {})).toBe('unknown job name');
    expect(checkJob(JOB.orderAction, { ...status(1, 'COMPLETED'), orderNumber: '1' })).toBe(
      '/orderNumber must be integer',
    );
  });
});
