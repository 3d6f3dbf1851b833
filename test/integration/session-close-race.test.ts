/**
 * A customer's submit and the close of its session, raced over real HTTP on one API node and two
 * worker processes with six queue partitions. Submits queue by location, closes by session, so
 * with the location's partition busy (a register reporting failures) a close is often applied
 * before the submit it raced. Whatever the order, once the close has answered no order of the
 * session may be PLACED: the kitchen would cook for a guest who has left.
 */
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { loadConfig } from '@pos/shared/config';
import type { OrderRecord } from '@pos/shared/domain/records';
import { TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import { layoutPartitions, queueLayout } from '@pos/shared/queue/transition-queue';
import { customerAt } from '../support/customer';
import { openDb } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { eventually } from '../support/wait';

const SESSIONS = 60;
/** Failure reports kept in flight at once: more than the partition's workers take together. */
const REPORTERS = 24;

describe('closing a session while its submit is in flight', () => {
  let env: StackEnv;
  let roles: ChildRole[] = [];
  let origin: string;
  let admin: AdminClient;
  let db: Awaited<ReturnType<typeof openDb>>;

  beforeAll(async () => {
    env = stackEnv({ QUEUE_PARTITIONS: '6', WORKER_CONCURRENCY: '4' });
    const api = await spawnRole('api', env);
    roles = [api, await spawnRole('worker', env), await spawnRole('worker', env)];
    origin = `http://127.0.0.1:${api.port}`;
    admin = new AdminClient(origin, env.ADMIN_TOKEN!);
    db = await openDb(env);
  }, 90_000);
  afterAll(async () => {
    await db?.close();
    for (const role of roles) expect(await role.stop()).toBe(0);
  });

  /** Waits until no job is waiting, active or delayed in any partition. */
  async function queuesIdle(): Promise<void> {
    const connection = new Redis(env.REDIS_URL!);
    const queues = layoutPartitions(queueLayout(loadConfig(env))).current.map(
      (p) => new Queue(TRANSITION_QUEUE, { connection, prefix: p.prefix }),
    );
    try {
      await eventually(
        async () => {
          const counts = await Promise.all(queues.map((q) => q.getJobCounts('active', 'wait', 'delayed')));
          return counts.every((c) => Object.values(c).every((n) => n === 0));
        },
        'the transition queues idle',
        30_000,
      );
    } finally {
      await Promise.all(queues.map((q) => q.close()));
      connection.disconnect();
    }
  }

  it('no order of a session is PLACED once its close has answered, whatever the queue order', async () => {
    const location = await admin.createLocation('Closing race', 1000);
    const registerKey = (await admin.createServiceSession(location.id, 'reg-race')).apiKey;
    const baseUrl = `${origin}/api/v1`;

    // Customers, each with one order NEW (finished, not yet submitted).
    const customers = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, i) => {
        const customer = await customerAt({ admin, baseUrl }, location.id, i + 1);
        const created = await call('POST', `${customer.url}/orders`, {
          apiKey: customer.key,
          body: { rows: sampleRows },
        });
        expect(created.status).toBe(201);
        const number = created.json<OrderRecord>().number;
        expect((await call('POST', `${customer.url}/orders/${number}/finish`, { apiKey: customer.key })).status).toBe(
          200,
        );
        return { ...customer, number };
      }),
    );

    // The location's partition kept busy: a register reporting failures on its orders.
    const failing = await Promise.all(Array.from({ length: 8 }, () => admin.createOrder(location.id, sampleRows)));
    let flooding = true;
    let reports = 0;
    const reporters = Array.from({ length: REPORTERS }, async (_, i) => {
      for (let n = i; flooding; n++) {
        const res = await call('POST', `${baseUrl}/orders/${failing[n % failing.length]!.number}/failure`, {
          apiKey: registerKey,
          body: {},
        });
        expect([200, 503]).toContain(res.status);
        reports += 1;
      }
    });
    await eventually(() => reports >= REPORTERS, 'the failure reports under way', 15_000);

    // Each customer submits, and its session is closed while the submit is in flight.
    const pairs = await Promise.all(
      customers.map(async (customer) => {
        const submitted = call('POST', `${customer.url}/orders/${customer.number}/submit`, { apiKey: customer.key });
        const closed = call('DELETE', `${customer.url}/session`, { apiKey: customer.key });
        return { customer, submit: await submitted, close: await closed };
      }),
    );
    flooding = false;
    await Promise.all(reporters);
    await queuesIdle();

    const answered = pairs.filter((p) => p.close.status === 204);
    // Most closes answer; a close whose submit ran first finds a PLACED order and aborts it.
    expect(answered.length).toBeGreaterThan(SESSIONS / 2);
    const states = new Map<number, string>();
    for (const { customer } of answered)
      states.set(customer.number, (await db.order(location.id, customer.number))!.state);
    const placed = answered.filter((p) => states.get(p.customer.number) === 'PLACED');
    expect(
      placed.map((p) => ({
        order: p.customer.number,
        submit: p.submit.status,
        detail: p.submit.status === 200 ? '' : p.submit.json().detail,
      })),
    ).toEqual([]);

    // The submits that lost to the close were told so, or were placed and then aborted by it.
    for (const { submit, customer } of answered) {
      if (submit.status === 200) expect(states.get(customer.number)).toBe('ABORTED');
      else if (submit.status === 409) expect(submit.json().detail).toBe('Session is closed; cannot submit');
      else expect([401, 503]).toContain(submit.status);
    }
    const refused = answered.filter((p) => p.submit.status === 409).length;
    // The race was run: some closes came first (on the code before the fix, these were left PLACED).
    expect(refused).toBeGreaterThan(0);
  }, 120_000);
});
