/**
 * A rolling upgrade from the previous release (deploy/previous-release) to this checkout and back,
 * under traffic, as docs/upgrades.md promises: two API nodes behind a balancer and two workers,
 * replaced one at a time with SIGTERM (workers first, then API nodes), on one Redis and one
 * MongoDB. Registers report failures (each retried with its Idempotency-Key until answered 200),
 * customers order, a till completes their orders from the location's stream, and a webhook
 * subscription made on the previous release receives every `order.placed`. Afterwards: every role
 * drained with exit 0 within 40 s and every replacement became ready; at least 99 % of requests
 * were answered 200 in each step; nothing answered 200 was lost or applied twice; every submitted
 * order reached the till (on the stream at most once, or in its poll after a reconnect) and its
 * `order.placed` its receiver; keys and orders made by one
 * release were used by the other; this release's migrations ran on what the previous one wrote.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { RegisterClient } from '@pos/shared/clients/register/client';
import { isOrderRecord, type OrderRecord } from '@pos/shared/domain/records';
import { MIGRATIONS } from '@pos/shared/migrations/list';
import { Balancer } from '../support/balancer';
import { openDb } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { outboxesRelayed } from '../support/outboxes';
import { previousRelease, releaseAt } from '../support/release';
import { stopRoles } from '../support/roles';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { eventually, pause } from '../support/wait';
import { Receiver, startReceiver } from '../support/webhook-receiver';

const DRAIN_BOUND_MS = 40_000;
/** Traffic each step runs under after its replacement is ready, before the next step. */
const STEP_TRAFFIC_MS = 2_500;
/**
 * The pause between one register's answered report and its next: a few a second each, so that
 * every replacement happens with reports in flight, and the test's webhooks (each report places
 * the order again, and its `order.placed` is delivered) stay within what the stand-in MongoDB of
 * CI serves on two cores alongside the other suites.
 */
const REPORT_EVERY_MS = 250;

type Role = ChildRole & { port?: number; name: string };
type Release = 'previous' | 'this';

describe('a rolling upgrade from the previous release and back, under traffic', () => {
  let previousRoot: string;
  let env: StackEnv;
  let balancer: Balancer;
  let receiver: Receiver;
  const everyRole: Role[] = [];

  beforeAll(async () => {
    previousRoot = await releaseAt(previousRelease());
    env = stackEnv({ WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s,2s,5s,10s' });
    balancer = await Balancer.start();
    receiver = await startReceiver();
  }, 15 * 60_000);
  afterAll(async () => {
    // ROLE_LOGS: a folder to keep each role's log lines in, for a run that failed
    if (process.env.ROLE_LOGS) everyRole.forEach((role, i) => fs.writeFileSync(path.join(process.env.ROLE_LOGS!, `${i}-${role.name}.log`), role.output()));
    await stopRoles(everyRole, 'kill');
    await balancer?.close();
    await receiver?.close();
  });

  const start = async (role: 'api' | 'worker', release: Release): Promise<Role> => {
    const started = { ...(await spawnRole(role, env, release === 'previous' ? { root: previousRoot } : {})), name: `${role}-${release}` };
    everyRole.push(started);
    if (role === 'api') {
      const origin = `http://127.0.0.1:${started.port}`;
      await eventually(async () => (await call('GET', `${origin}/readyz`).catch(() => undefined))?.status === 200, `the ${release} API node ready`, 60_000);
      balancer.add(origin);
    }
    return started;
  };

  it('loses nothing answered, applies nothing twice, and each release uses what the other made', async () => {
    const apis = [await start('api', 'previous'), await start('api', 'previous')];
    const workers = [await start('worker', 'previous'), await start('worker', 'previous')];
    const admin = new AdminClient(balancer.origin, env.ADMIN_TOKEN!);
    const base = `${balancer.origin}/api/v1`;

    // Made on the previous release: the location, registers' keys and orders, the subscription.
    const location = await admin.createLocation('Rolled', 1000);
    const subscription = await admin.createWebhook({ url: receiver.url, events: ['order.placed'], locationIds: [location.id] });
    receiver.secrets.push(subscription.secret);
    const newReporter = async (deviceId: string, on = admin) => ({
      key: (await on.createServiceSession(location.id, deviceId)).apiKey,
      order: (await on.createOrder(location.id, sampleRows)).number,
      answered: 0,
      givenUp: 0,
    });
    const reporters = [await newReporter('register-1'), await newReporter('register-2')];
    const till = (await admin.createServiceSession(location.id, 'till')).apiKey;

    // Every request's status, by the step it was answered in; the last refusals, for a failure's message.
    let step = 'before';
    const statuses = new Map<string, number[]>();
    const refusals: string[] = [];
    const seen = () => JSON.stringify({ statuses: Object.fromEntries([...statuses].map(([name, list]) => [name, list.filter((s) => s !== 200 && s !== 201)])), refusals: refusals.slice(-10) });
    const answered = async (method: string, url: string, options: Parameters<typeof call>[2]): Promise<number> => {
      const res = await call(method, url, { timeoutMs: 15_000, ...options }).catch(() => undefined);
      const status = res?.status ?? 0;
      statuses.set(step, [...(statuses.get(step) ?? []), status]);
      if (status !== 200 && status !== 201) refusals.push(`${step}: ${method} ${new URL(url).pathname} ${status} ${res?.text.slice(0, 200) ?? ''}`);
      return status;
    };
    let running = true;
    /** Once the traffic is told to stop, a write still unanswered this long after is given up (the test fails). */
    let stopAt = Infinity;
    /** A write retried with its key until it is answered 200 (or 201); false if given up. */
    const until200 = async (method: string, url: string, apiKey: string, body?: unknown): Promise<boolean> => {
      const key = randomUUID();
      for (;;) {
        const status = await answered(method, url, { apiKey, body, headers: { 'Idempotency-Key': key } });
        if (status === 200 || status === 201) return true;
        if (Date.now() > stopAt + 30_000) return false;
        await pause(200);
      }
    };
    const stopTraffic = () => {
      running = false;
      stopAt = Date.now();
    };

    const loops: Promise<void>[] = [];
    const reportLoop = (reporter: Awaited<ReturnType<typeof newReporter>>) =>
      loops.push(
        (async () => {
          while (running) {
            if (await until200('POST', `${base}/orders/${reporter.order}/failure`, reporter.key, { reason: 'rolling' })) reporter.answered += 1;
            else reporter.givenUp += 1;
            await pause(REPORT_EVERY_MS);
          }
        })(),
      );
    reporters.forEach(reportLoop);

    // Customers order; each submitted order is the till's to complete, as the stream shows it.
    const submitted = new Set<number>();
    const customerLoop = async (table: number) => {
      while (running) {
        const { apiKey } = await admin.createCustomerSession(location.id, table, table);
        const key = randomUUID();
        let number = 0;
        while (running && number === 0) {
          const res = await call('POST', `${base}/customer/orders`, { apiKey, body: { rows: sampleRows }, headers: { 'Idempotency-Key': key }, timeoutMs: 15_000 }).catch(() => undefined);
          statuses.set(step, [...(statuses.get(step) ?? []), res?.status ?? 0]);
          if (res?.status === 201) number = res.json<OrderRecord>().number;
          else {
            refusals.push(`${step}: create ${res?.status ?? 0} ${res?.text.slice(0, 200) ?? ''}`);
            await pause(200);
          }
        }
        if (number === 0) return;
        if (!(await until200('POST', `${base}/customer/orders/${number}/finish`, apiKey))) return;
        if (!(await until200('POST', `${base}/customer/orders/${number}/submit`, apiKey))) return;
        submitted.add(number);
        await pause(100);
      }
    };
    loops.push(customerLoop(1), customerLoop(2));

    /** How often each customer order came PLACED on the till's stream (a counter order is announced again with each failure report). */
    const placedOnStream = new Map<number, number>();
    const completing = new Set<number>();
    const completed = new Set<number>();
    const streamStates: string[] = [];
    /** The till's work: a customer's order (a customer's number is on it, not on the reporters' counter orders) completed once. */
    const complete = async (order: OrderRecord) => {
      if (order.state !== 'PLACED' || order.userNumber === undefined || completing.has(order.number)) return;
      completing.add(order.number);
      if (await until200('PUT', `${base}/orders/${order.number}/statusupdate`, till, { newState: 'COMPLETED' })) completed.add(order.number);
    };
    // The till follows the stream and, after each reconnect, polls its work, as the interface has a
    // register do (an order placed while it was away, below its cursor, is not replayed: it is polled).
    const polled = new Set<number>();
    const stream = new RegisterClient({ baseUrl: base, apiKey: till }).openStream({
      onState: (state) => streamStates.push(`${step}: ${JSON.stringify(state)}`),
      onOrder: async (order) => {
        if (order.state === 'PLACED' && order.userNumber !== undefined) placedOnStream.set(order.number, (placedOnStream.get(order.number) ?? 0) + 1);
        await complete(order);
      },
      onPoll: async (work) => {
        for (const record of work.filter(isOrderRecord)) {
          polled.add(record.number);
          await complete(record);
        }
      },
    });

    try {
      await eventually(() => submitted.size >= 2 && reporters.every((r) => r.answered >= 3), 'traffic on the previous release', 60_000, seen);

      const drains: { step: string; code: number | null; ms: number }[] = [];
      const replace = async (roles: Role[], index: number, role: 'api' | 'worker', release: Release) => {
        step = `${role} ${index + 1} to ${release}`;
        const old = roles[index]!;
        if (role === 'api') balancer.remove(`http://127.0.0.1:${old.port}`);
        const stopping = Date.now();
        drains.push({ step, code: await old.stop(), ms: Date.now() - stopping });
        roles[index] = await start(role, release);
        await pause(STEP_TRAFFIC_MS); // the traffic on the new mix of releases is what the step tests
      };

      // Forward, workers first; then a key and an order made on this release, used from then on.
      await replace(workers, 0, 'worker', 'this');
      await replace(workers, 1, 'worker', 'this');
      await replace(apis, 0, 'api', 'this');
      const onThis = new AdminClient(`http://127.0.0.1:${apis[0]!.port}`, env.ADMIN_TOKEN!);
      const madeHere = await newReporter('register-made-here', onThis);
      reporters.push(madeHere);
      reportLoop(madeHere);
      await replace(apis, 1, 'api', 'this');
      const migrations = await openDb(env);
      try {
        expect((await migrations.db.collection('migrations').find({}).toArray()).map((doc) => doc._id).sort()).toEqual(MIGRATIONS.map((m) => m.id).sort());
      } finally {
        await migrations.close();
      }

      // And back, in the same order.
      await replace(workers, 0, 'worker', 'previous');
      await replace(workers, 1, 'worker', 'previous');
      await replace(apis, 0, 'api', 'previous');
      await replace(apis, 1, 'api', 'previous');
      step = 'after';
      await eventually(() => madeHere.answered >= 3, "reports with this release's key answered by the previous release", 30_000, seen);

      stopTraffic();
      await Promise.all(loops);
      expect(reporters.map((r) => r.givenUp)).toEqual(reporters.map(() => 0));
      const notCompleted = () => [...submitted].filter((n) => !completed.has(n));
      await eventually(() => notCompleted().length === 0, 'every submitted order completed from the stream', 30_000, () =>
        JSON.stringify({ notCompleted: notCompleted().map((n) => ({ n, placedOnStream: placedOnStream.get(n) ?? 0, completing: completing.has(n) })), streamStates: streamStates.slice(-20), ...JSON.parse(seen()) }),
      );

      // UPGRADE_REPORT: a file to write what the roll did (the figures of docs/upgrades.md)
      if (process.env.UPGRADE_REPORT) {
        const steps = Object.fromEntries([...statuses].map(([name, list]) => [name, { requests: list.length, answered: list.filter((s) => s === 200 || s === 201).length }]));
        const report = { drains, steps, reports: reporters.map((r) => r.answered), submitted: submitted.size, refusals };
        fs.writeFileSync(process.env.UPGRADE_REPORT, JSON.stringify(report, null, 2));
      }
      for (const drain of drains) expect(`${drain.step}: exit ${drain.code}, ${drain.ms < DRAIN_BOUND_MS ? 'within' : 'past'} 40 s`).toBe(`${drain.step}: exit 0, within 40 s`);
      for (const [name, list] of statuses) {
        const ok = list.filter((status) => status === 200 || status === 201).length;
        expect(`${name}: ${ok / list.length >= 0.99 ? 'at least' : 'under'} 99 % answered (${ok} of ${list.length})`).toMatch(/at least 99 %/);
      }

      // Nothing answered lost or doubled; every order on the stream (each version once) and delivered.
      const db = await openDb(env);
      try {
        for (const reporter of reporters) expect((await db.order(location.id, reporter.order))!.failureCount).toBe(reporter.answered);
      } finally {
        await db.close();
      }
      // each on the stream at most once, and on the stream or in a poll after a reconnect
      expect([...placedOnStream].filter(([, count]) => count > 1)).toEqual([]);
      expect([...submitted].filter((number) => !placedOnStream.has(number) && !polled.has(number))).toEqual([]);
      await outboxesRelayed(env, 60_000);
      const placedNumbers = () => new Set([...receiver.delivered().values()].map((hook) => (hook.data.order as { number: number }).number));
      await eventually(() => [...submitted].every((n) => placedNumbers().has(n)), 'every submitted order.placed delivered', 60_000, () => `missing ${[...submitted].filter((n) => !placedNumbers().has(n))}`);
      expect(receiver.received.every((hook) => hook.verifiedBy.length > 0)).toBe(true);
    } finally {
      stopTraffic();
      await stream.close();
      await Promise.all(loops);
    }
  }, 10 * 60_000);
});
