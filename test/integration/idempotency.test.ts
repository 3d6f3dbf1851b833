/**
 * Safe retries with `Idempotency-Key`: over real HTTP, on two API nodes sharing Redis and MongoDB.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import type { OrderRecord } from '@pos/shared/domain/records';
import { RunningApi, startApi } from '@pos/api/server';
import { openDb, registerAt, useDb } from '../support/fixtures';
import { adminHeader, call, sampleRows } from '../support/http';
import { spawnRole, startStack, useStack } from '../support/stack';
import { eventually } from '../support/wait';

type Stack = Awaited<ReturnType<typeof startStack>>;

const keyed = (key: string, extra: Record<string, string> = {}) => ({ 'Idempotency-Key': key, ...extra });

describe('Idempotency-Key on writes', () => {
  const stack = useStack();
  let other: RunningApi;
  let otherBase: string;
  const db = useDb(stack);

  beforeAll(async () => {
    // a second API node of the same deployment
    other = await startApi(loadConfig(stack.env), createLogger('silent', 'test'));
    otherBase = `http://127.0.0.1:${other.port}/api/v1`;
  });
  afterAll(async () => {
    await other.close();
  });

  it('a repeat on the other node answers the kept response, byte for byte, and does no work again', async () => {
    const { location, key } = await registerAt(stack, 'Replay', 100);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const idem = randomUUID();
    const path = `/orders/${order.number}/failure`;
    const first = await call('POST', `${stack.baseUrl}${path}`, {
      apiKey: key,
      headers: keyed(idem),
      body: { reason: 'jam' },
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const again = await call('POST', `${otherBase}${path}`, {
      apiKey: key,
      headers: keyed(idem),
      body: { reason: 'jam' },
    });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.text).toBe(first.text);
    expect(await db.order(location.id, order.number)).toMatchObject({ failureCount: 1, version: 1 });
  });

  it('the same key on a changed body or another route is a 422; on another caller it is another key', async () => {
    const { location, key } = await registerAt(stack, 'Mismatch', 100);
    const second = await stack.admin.createServiceSession(location.id, 'second-register');
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const idem = randomUUID();
    const failure = `${stack.baseUrl}/orders/${order.number}/failure`;
    expect((await call('POST', failure, { apiKey: key, headers: keyed(idem), body: { reason: 'a' } })).status).toBe(
      200,
    );

    const changed = await call('POST', failure, { apiKey: key, headers: keyed(idem), body: { reason: 'b' } });
    expect(changed.status).toBe(422);
    expect(changed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(changed.json()).toMatchObject({ status: 422, title: 'Idempotency-Key is already used' });
    const otherRoute = await call('PUT', `${stack.baseUrl}/orders/${order.number}/statusupdate`, {
      apiKey: key,
      headers: keyed(idem),
      body: { newState: 'COMPLETED' },
    });
    expect(otherRoute.status).toBe(422);

    // another register of the same location: its own key space
    const theirs = await call('POST', failure, { apiKey: second.apiKey, headers: keyed(idem), body: { reason: 'a' } });
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await db.order(location.id, order.number)).toMatchObject({ failureCount: 2, version: 2, state: 'PLACED' });
  });

  it('without the header nothing changes: two identical reports count twice', async () => {
    const { location, key } = await registerAt(stack, 'Plain', 100);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    for (let i = 0; i < 2; i++) {
      const answer = await call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, { apiKey: key, body: {} });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(await db.order(location.id, order.number)).toMatchObject({ failureCount: 2 });
  });

  it('refuses a key that is empty, too long or not printable ASCII', async () => {
    const { location, key } = await registerAt(stack, 'BadKeys', 100);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    for (const bad of ['', 'x'.repeat(256), 'caf\u00e9']) {
      const answer = await fetch(`${stack.baseUrl}/orders/${order.number}/failure`, {
        method: 'POST',
        headers: {
          api_key: key,
          'content-type': 'application/json',
          'Idempotency-Key': Buffer.from(bad, 'utf8').toString('latin1'),
        },
        body: '{}',
      });
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({
        title: 'Validation error',
        detail: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
      });
    }
    expect(
      (
        await call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, {
          apiKey: key,
          headers: keyed('x'.repeat(255)),
          body: {},
        })
      ).status,
    ).toBe(200);
    expect(await db.order(location.id, order.number)).toMatchObject({ failureCount: 1 });
  });

  it('creates: a repeat gets the same order, and a retry whose kept answer was lost finds what its first attempt created', async () => {
    const location = await stack.admin.createLocation('Creates');
    const idem = randomUUID();
    const create = () =>
      call('POST', `${stack.origin}/admin/v1/locations/${location.id}/orders`, {
        headers: keyed(idem, adminHeader(stack.env)),
        body: { rows: sampleRows, tableNumber: 3 },
      });
    const first = await create();
    expect(first.status).toBe(201);
    const replayed = await create();
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(first.text);

    // Redis forgets the answer (as after a Redis restart, or a node that died before keeping it).
    const redis = new Redis(stack.env.REDIS_URL!);
    try {
      const kept = await redis.keys(`${stack.env.REDIS_PREFIX}:idem:*`);
      expect(kept.length).toBeGreaterThan(0);
      await redis.del(...kept);
    } finally {
      redis.disconnect();
    }
    const retried = await create();
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.json<OrderRecord>()).toEqual(first.json<OrderRecord>());
    const stored = await db.db.collection('orders').countDocuments({ locationId: location.id });
    expect(stored).toBe(1);
  });
});

describe('Idempotency-Key while the first attempt is outstanding', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof openDb>>;

  beforeAll(async () => {
    // No worker at first: queued jobs wait, and a request waits JOB_TIMEOUT for its job (long
    // enough for a second request to be answered meanwhile, however loaded the machine).
    stack = await startStack({ JOB_TIMEOUT: '3s' }, { worker: false });
    db = await openDb(stack.env);
  });
  afterAll(async () => {
    await db.close();
    await stack.close();
  });

  it('a concurrent repeat gets 409; the first times out unknown; once a worker runs, the retry answers its outcome, applied once', async () => {
    const { location, key } = await registerAt(stack, 'Outstanding', 100);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const idem = randomUUID();
    const report = () =>
      call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, { apiKey: key, headers: keyed(idem), body: {} });

    let firstAnswered = false;
    const first = report().finally(() => (firstAnswered = true));
    // Its job queued: the first attempt holds the key, and waits for an outcome until JOB_TIMEOUT.
    await eventually(
      async () => (await stack.api.deps.queues.jobCounts('waiting')).waiting === 1,
      'the first attempt queued',
    );
    const concurrent = await report();
    expect(firstAnswered).toBe(false);
    expect(concurrent.status).toBe(409);
    expect(concurrent.headers.get('retry-after')).toBe('1');
    expect(concurrent.json()).toMatchObject({ title: 'A request is outstanding for this Idempotency-Key' });

    // Nobody took the job within JOB_TIMEOUT: outcome unknown, and not kept.
    expect((await first).status).toBe(503);
    expect(await db.order(location.id, order.number)).toMatchObject({ failureCount: 0 });

    const worker = await spawnRole('worker', stack.env);
    try {
      // The queued job runs now; the retry (same key, same job id) follows it instead of queuing another.
      let retried = await report();
      for (let i = 0; i < 5 && retried.status === 503; i++) retried = await report();
      expect(retried.status).toBe(200);
      expect(retried.json<OrderRecord>()).toMatchObject({
        number: order.number,
        state: 'PLACED',
        failedTime: expect.any(String),
      });
      const replay = await report();
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(retried.text);
      expect(await db.order(location.id, order.number)).toMatchObject({ failureCount: 1, version: 1 });
    } finally {
      await worker.stop();
    }
  });
});

describe('Idempotency-Key and a worker killed mid-job', () => {
  const stack = useStack({ JOB_LOCK_DURATION: '1s', JOB_TIMEOUT: '2s' }, { worker: false });
  const db = useDb(stack);

  it('the retried failure report is counted once', async () => {
    const { location, key } = await registerAt(stack, 'Killed', 100);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const idem = randomUUID();
    const report = () =>
      call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, {
        apiKey: key,
        headers: keyed(idem),
        body: { reason: 'jam' },
      });

    const doomed = await spawnRole('worker', { ...stack.env, FAULT_INJECT: 'crash-after-apply' });
    const first = report();
    await doomed.exited;
    expect(doomed.process.signalCode).toBe('SIGKILL');
    // The write landed; the answer did not.
    expect((await first).status).toBe(503);
    expect(await db.order(location.id, order.number)).toMatchObject({ failureCount: 1 });

    const rescuer = await spawnRole('worker', stack.env);
    try {
      let retried = await report();
      for (let i = 0; i < 10 && retried.status === 503; i++) retried = await report();
      expect(retried.status).toBe(200);
      expect(await db.order(location.id, order.number)).toMatchObject({ failureCount: 1, version: 1 });
    } finally {
      await rescuer.stop();
    }
  });
});
