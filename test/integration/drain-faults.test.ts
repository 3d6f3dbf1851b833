/**
 * Drains that finish (docs/operating.md#stopping-a-role): an API node and a worker get SIGTERM
 * under load while their MongoDB hangs (SIGSTOP) or drops every connection, and each still exits 0
 * within SHUTDOWN_GRACE, handing back what it could not finish. Then with MongoDB back and new
 * roles, every report (each retried under its Idempotency-Key until answered 200) counts once.
 */
import { randomUUID } from 'node:crypto';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { startJongodb } from '../../scripts/embedded/jongodb';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { openDb } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { stopRoles } from '../support/roles';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { TcpProxy } from '../../scripts/embedded/tcp-proxy';
import { eventually, pause } from '../support/wait';

const GRACE_MS = 4_000;
/** A role's exit after SIGTERM: the grace period, and slack for a loaded machine's process exit. */
const EXIT_BOUND_MS = GRACE_MS + 1_500;
const REGISTERS = 6;

describe.each(['hangs', 'drops every connection'] as const)('a drain while MongoDB %s', (fault) => {
  let mongo: ChildServer;
  let proxy: TcpProxy;
  let env: StackEnv;
  const roles: ChildRole[] = [];

  beforeAll(async () => {
    mongo = await startJongodb();
    proxy = await TcpProxy.start(mongo.url);
    env = stackEnv({
      MONGO_URL: proxy.url('mongodb'),
      SHUTDOWN_GRACE: `${GRACE_MS}ms`,
      JOB_TIMEOUT: '3s',
      JOB_LOCK_DURATION: '3s',
    });
  });
  afterAll(async () => {
    if (mongo?.process.pid) process.kill(mongo.process.pid, 'SIGCONT');
    await stopRoles(roles, 'kill');
    await proxy?.close();
    await mongo?.stop();
  });

  it('ends each role with exit 0 within its grace period; nothing answered 200 is lost or doubled', async () => {
    const [api, worker] = await Promise.all([spawnRole('api', env), spawnRole('worker', env)]);
    roles.push(api, worker);
    const admin = new AdminClient(`http://127.0.0.1:${api.port}`, env.ADMIN_TOKEN!);
    const location = await admin.createLocation('Drained', 1000);
    const registers = await Promise.all(
      Array.from({ length: REGISTERS }, async (_, i) => ({
        key: (await admin.createServiceSession(location.id, `register-${i}`)).apiKey,
        order: (await admin.createOrder(location.id, sampleRows)).number,
        answered: 0,
      })),
    );

    // Registers report until told to stop; each report is retried with its key until answered 200.
    let origin = `http://127.0.0.1:${api.port}`;
    let running = true;
    const load = registers.map(async (register) => {
      while (running) {
        const key = randomUUID();
        for (;;) {
          const status = await call('POST', `${origin}/api/v1/orders/${register.order}/failure`, {
            apiKey: register.key,
            headers: { 'Idempotency-Key': key },
            body: { reason: 'drain' },
            timeoutMs: 10_000,
          }).then(
            (res) => res.status,
            () => 0,
          );
          if (status === 200) break;
          await pause(200); // a register's retry delay
        }
        register.answered += 1;
      }
    });
    await eventually(() => registers.every((r) => r.answered >= 3), 'reports answered before the fault', 20_000);

    if (fault === 'hangs') process.kill(mongo.process.pid!, 'SIGSTOP');
    else await proxy.cut();
    await pause(300); // jobs and requests now wait on MongoDB: that is the drain under test
    const started = Date.now();
    const exits = await Promise.all(
      [api, worker].map(async (role) => ({ code: await role.stop(), ms: Date.now() - started })),
    );
    for (const exit of exits) {
      expect(exit.code).toBe(0);
      expect(exit.ms).toBeLessThan(EXIT_BOUND_MS);
    }

    // MongoDB back, new roles: the reports still unanswered get their answers, each counted once.
    if (fault === 'hangs') process.kill(mongo.process.pid!, 'SIGCONT');
    else await proxy.restore();
    const [api2, worker2] = await Promise.all([spawnRole('api', env), spawnRole('worker', env)]);
    roles.push(api2, worker2);
    origin = `http://127.0.0.1:${api2.port}`;
    const before = registers.map((r) => r.answered);
    await eventually(() => registers.every((r, i) => r.answered > before[i]!), 'every register answered again', 30_000);
    running = false;
    await Promise.all(load);

    const db = await openDb(env);
    try {
      for (const register of registers)
        expect((await db.order(location.id, register.order))!.failureCount).toBe(register.answered);
    } finally {
      await db.close();
    }
  });
});
