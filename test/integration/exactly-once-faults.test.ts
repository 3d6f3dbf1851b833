/**
 * Exactly once under keyed retries (docs/retries-and-idempotency.md#what-exactly-once-holds-through):
 * a retry whose record and job Redis lost is recognised however busy its order was; and the fault
 * run, keyed failure reports spread over shared orders, retried with their keys until answered 200,
 * while workers, an API node and Redis (restarted from its append-only file, three times) are
 * SIGKILLed on a schedule. Afterwards each order's failure count lies between the reports answered
 * 200 and those plus the reports never answered. Before the applied-jobs ledger, the fault run
 * counted one report twice in 2 of 5 runs. FAULT_RUN_MS and FAULT_ORDERS change its length and
 * its orders; FAULT_LOG_DIR keeps the roles' logs there.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { startRedisServer } from '../../scripts/embedded/redis-server';
import { openDb } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { stopRoles } from '../support/roles';
import { ChildRole, spawnRole, stackEnv, StackEnv, useStack } from '../support/stack';
import { registerAt } from '../support/fixtures';
import Redis from 'ioredis';
import { openTransitionQueues } from '../support/queues';
import { pause } from '../support/wait';

const RUN_MS = Number(process.env.FAULT_RUN_MS ?? 30_000);
const REGISTERS = 12;
const ORDERS = Number(process.env.FAULT_ORDERS ?? 8);
const RETRIES = 40;

describe('a keyed retry after Redis lost its record and its job', () => {
  const stack = useStack();

  it('is recognised however many writes its order had since: the report counts once', async () => {
    const { locationId, key } = await registerAt(stack, 'Busy order', 1000);
    const order = await stack.admin.createOrder(locationId, sampleRows);
    const url = `${stack.baseUrl}/orders/${order.number}/failure`;
    const keyed = { apiKey: key, headers: { 'Idempotency-Key': randomUUID() }, body: { reason: 'printer jam' } };
    expect((await call('POST', url, keyed)).status).toBe(200);
    for (let i = 0; i < 150; i++)
      expect((await call('POST', url, { apiKey: key, body: { reason: 'again' } })).status).toBe(200);

    // What a Redis restart that lost its last writes loses: the key's record, and the finished job.
    const redis = new Redis(stack.env.REDIS_URL!);
    const opened = openTransitionQueues(stack.env);
    try {
      for (const stale of await redis.keys(`${stack.env.REDIS_PREFIX}:idem:*`)) await redis.del(stale);
      for (const { queue } of opened.queues.all) await queue.clean(0, 10_000, 'completed');
    } finally {
      await opened.close();
      redis.disconnect();
    }

    const retried = await call('POST', url, keyed);
    expect(retried.status).toBe(200);
    const db = await openDb(stack.env);
    try {
      expect((await db.order(locationId, order.number))!.failureCount).toBe(151);
    } finally {
      await db.close();
    }
  });
});

describe('exactly once: keyed reports on shared orders through killed workers, API node and Redis', () => {
  let redisServer: ChildServer;
  let redisDir: string;
  let env: StackEnv;
  const roles: ChildRole[] = [];

  beforeAll(async () => {
    redisDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-redis-aof-'));
    redisServer = await startRedisServer(undefined, { dir: redisDir });
    env = stackEnv({ REDIS_URL: redisServer.url, JOB_TIMEOUT: '4s', JOB_LOCK_DURATION: '4s' });
  });
  afterAll(async () => {
    await stopRoles(roles, 'kill');
    if (process.env.FAULT_LOG_DIR)
      roles.forEach((r, i) => fs.writeFileSync(path.join(process.env.FAULT_LOG_DIR!, `role-${i}.log`), r.output()));
    await redisServer?.stop();
    fs.rmSync(redisDir, { recursive: true, force: true });
  });

  it('every order counts each report answered 200 once', async () => {
    const apis = await Promise.all([spawnRole('api', env), spawnRole('api', env)]);
    const workers = await Promise.all([spawnRole('worker', env), spawnRole('worker', env)]);
    roles.push(...apis, ...workers);
    const admin = new AdminClient(`http://127.0.0.1:${apis[1]!.port}`, env.ADMIN_TOKEN!);
    const location = await admin.createLocation('exactly once', 1000);
    const orders = await Promise.all(Array.from({ length: ORDERS }, () => admin.createOrder(location.id, sampleRows)));
    const keys = await Promise.all(
      Array.from(
        { length: REGISTERS },
        async (_, i) => (await admin.createServiceSession(location.id, `register-${i}`)).apiKey,
      ),
    );
    const answered = new Map<number, number>(orders.map((o) => [o.number, 0]));
    const unanswered = new Map<number, number>(orders.map((o) => [o.number, 0]));
    const unexpected: string[] = [];
    const ports = apis.map((api) => api.port!);

    const report = async (key: string, number: number, first: number) => {
      const idem = randomUUID();
      for (let attempt = 0; attempt < RETRIES; attempt++) {
        const port = ports[(first + attempt) % 2]!;
        let status = 0;
        let text = '';
        try {
          const answer = await call('POST', `http://127.0.0.1:${port}/api/v1/orders/${number}/failure`, {
            apiKey: key,
            headers: { 'Idempotency-Key': idem },
            body: { reason: 'fault run' },
            timeoutMs: 12_000,
          });
          ({ status, text } = answer);
        } catch {
          status = 0;
        }
        if (status === 200) {
          answered.set(number, answered.get(number)! + 1);
          return;
        }
        if (status !== 0 && status !== 503 && status !== 409) unexpected.push(`${status} ${text}`);
        await pause(250); // the register's retry delay
      }
      unanswered.set(number, unanswered.get(number)! + 1);
    };

    const started = Date.now();
    let running = true;
    const load = keys.map(async (key, i) => {
      for (let n = 0; running; n++) await report(key, orders[(i * 7 + n * 5) % ORDERS]!.number, i + n);
    });
    const at = async (share: number) => pause(Math.max(0, started + share * RUN_MS - Date.now()));
    const redisPort = Number(new URL(redisServer.url).port);

    await at(0.15);
    await workers[0]!.kill();
    await at(0.22);
    roles.push((workers[0] = await spawnRole('worker', env)));
    await at(0.3);
    await apis[0]!.kill();
    await at(0.36);
    const restarted = await spawnRole('api', { ...env, PORT: String(ports[0]) });
    roles.push(restarted);
    const restartRedis = async (down: number, up: number) => {
      await at(down);
      redisServer.process.kill('SIGKILL');
      await at(up);
      redisServer = await startRedisServer(redisPort, { dir: redisDir });
    };
    await restartRedis(0.45, 0.5);
    await at(0.6);
    await Promise.all(workers.map((w) => w.kill()));
    await at(0.64);
    roles.push(...(await Promise.all([spawnRole('worker', env), spawnRole('worker', env)])));
    // stricter than the schedule the report was found with: Redis dies twice more, a second apart
    await restartRedis(0.75, 0.78);
    await restartRedis(0.85, 0.88);
    await at(1);
    running = false;
    await Promise.all(load);

    const db = await openDb(env);
    try {
      const off: string[] = [];
      for (const order of orders) {
        const stored = await db.order(location.id, order.number);
        const ok = answered.get(order.number)!;
        const lost = unanswered.get(order.number)!;
        if (stored!.failureCount < ok || stored!.failureCount > ok + lost)
          off.push(`order ${order.number}: counted ${stored!.failureCount}, answered 200 ${ok}, unanswered ${lost}`);
      }
      expect(off).toEqual([]);
      expect(unexpected).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
