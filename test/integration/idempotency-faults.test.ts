/**
 * The fault run of safe retries: registers report failures with Idempotency-Keys while workers,
 * an API node and Redis are killed, and retry every unknown outcome with the same key until they
 * get an answer. Afterwards every order's failure count is exactly the number of its reports
 * answered 200. Child processes on a Redis of this file's own (restarted for real).
 */
import { randomUUID } from 'node:crypto';
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { startRedisServer } from '../../scripts/embedded/redis-server';
import { openDb } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { stopRoles } from '../support/roles';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { eventually, pause } from '../support/wait';

describe('safe retries through workers, an API node and Redis killed under load', () => {
  let redisServer: ChildServer;
  let env: StackEnv;
  const roles: ChildRole[] = [];
  let apis: (ChildRole & { port?: number })[];

  beforeAll(async () => {
    redisServer = await startRedisServer();
    env = stackEnv({ REDIS_URL: redisServer.url, JOB_TIMEOUT: '3s', JOB_LOCK_DURATION: '2s' });
    apis = await Promise.all([spawnRole('api', env), spawnRole('api', env)]);
    roles.push(...apis, ...(await Promise.all([spawnRole('worker', env), spawnRole('worker', env)])));
  });
  afterAll(async () => {
    await stopRoles(roles, 'kill');
    await redisServer?.stop();
  });

  it('every order counts exactly the reports that were answered 200', async () => {
    const admin = new AdminClient(`http://127.0.0.1:${apis[1]!.port}`, env.ADMIN_TOKEN!);
    const location = await admin.createLocation('faults', 1000);
    const registers = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => ({
        key: (await admin.createServiceSession(location.id, `register-${i}`)).apiKey,
        order: await admin.createOrder(location.id, sampleRows),
        answered200: 0,
        unexpected: [] as string[],
      })),
    );
    const alive = new Set(apis);

    /** One report, retried with its key on any live node until it has an answer. */
    const report = async (register: (typeof registers)[number], attempt0: number) => {
      const key = randomUUID();
      for (let attempt = attempt0; ; attempt++) {
        const nodes = [...alive];
        const node = nodes[attempt % nodes.length]!;
        let status: number;
        let text = '';
        try {
          const answer = await call(
            'POST',
            `http://127.0.0.1:${node.port}/api/v1/orders/${register.order.number}/failure`,
            {
              apiKey: register.key,
              headers: { 'Idempotency-Key': key },
              body: { reason: 'fault run' },
            },
          );
          status = answer.status;
          text = answer.text;
        } catch {
          status = 0; // the node died under the request: outcome unknown
        }
        if (status === 200) {
          register.answered200 += 1;
          return;
        }
        if (status !== 0 && status !== 503 && status !== 409) {
          register.unexpected.push(`${status} ${text}`);
          return;
        }
        await pause(100 + (attempt % 5) * 50); // a register's retry delay
      }
    };

    let running = true;
    const load = registers.map(async (register, i) => {
      for (let n = 0; running; n++) await report(register, i + n);
    });

    // Each fault strikes the load under way, and the load goes on after it: reports answered 200.
    const answered = () => registers.reduce((sum, r) => sum + r.answered200, 0);
    const progress = async (after: string) => {
      const target = answered() + 8;
      await eventually(() => answered() >= target, `eight more reports answered ${after}`, 30_000);
    };
    await progress('before any fault');
    await roles[2]!.kill(); // a worker, with whatever it was running
    roles.push(await spawnRole('worker', env));
    await progress('after a worker was killed');
    alive.delete(apis[0]!);
    await apis[0]!.kill(); // an API node, with the requests it held
    await progress('after an API node was killed');
    const port = Number(new URL(redisServer.url).port);
    await redisServer.stop(); // Redis, with the queue and the kept answers
    await pause(500); // down for a while, the reports meanwhile unanswered: the outage is what is tested
    redisServer = await startRedisServer(port);
    await progress('after Redis came back');
    running = false;
    await Promise.all(load);

    const db = await openDb(env);
    try {
      for (const register of registers) {
        expect(register.unexpected).toEqual([]);
        const stored = await db.order(location.id, register.order.number);
        expect({ failures: stored!.failureCount, writes: stored!.version }).toEqual({
          failures: register.answered200,
          writes: register.answered200,
        });
      }
    } finally {
      await db.close();
    }
  });
});
