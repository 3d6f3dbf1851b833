/**
 * A rolling upgrade from the previous release (deploy/previous-release) to this checkout and back,
 * and a rolling restart of this checkout, under traffic, as docs/upgrades.md promises: two API
 * nodes behind a balancer and two workers, replaced one at a time with SIGTERM (forward: workers,
 * then API nodes; back: API nodes, then workers), on one Redis and one MongoDB.
 *
 * On two locations six registers report failures (each retried with its Idempotency-Key until
 * answered 200: some 15 events a second for the relay); on two others customers order, each
 * location's till completes their orders from its stream, and a webhook subscription to those two
 * made before the roll receives every `order.placed`. Afterwards:
 * every role drained with exit 0 within 40 s and every replacement became ready; at least 99 % of
 * requests were answered 200 in each step; nothing answered 200 was lost or applied twice; every
 * submitted order reached its till (on the stream at most once, or in its poll after a reconnect)
 * and its `order.placed` its receiver within 30 s of the roll's end; keys and orders made by one
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
import { previousRelease, releaseAt } from '../support/release';
import { stopRoles } from '../support/roles';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { eventually, pause } from '../support/wait';
import { Receiver, startReceiver } from '../support/webhook-receiver';

const DRAIN_BOUND_MS = 40_000;
/** Every `order.placed` of a submitted order is delivered within this long of the roll's end. */
const DELIVERED_WITHIN_MS = 30_000;
/** Traffic each step runs under after its replacement is ready, before the next step. */
const STEP_TRAFFIC_MS = 2_500;
/** The pause between the roll's two halves, and the traffic after its end. */
const HALFWAY_MS = 8_000;
/** Registers reporting failures per location, and the pause between one's answered report and its next. */
const REPORTERS_PER_LOCATION = 3;
const REPORT_EVERY_MS = 400;
/** A reporter moves on to a new order of its own after this many reports (below the failure threshold). */
const REPORTS_PER_ORDER = 400;
/**
 * Customers per location, and the pause between one's submitted order and its next. The two
 * paces are what the previous release delivers within seconds on the MongoDB stand-in, whose
 * writes slow as the event log grows: 0.5.0 sends each delivery on its own, some 4 a second
 * here at most, and its relay's passes, unbounded, outlast its lease under a heavier flow.
 */
const CUSTOMERS_PER_LOCATION = 2;
const ORDER_EVERY_MS = 750;

type Role = ChildRole & { port?: number; name: string };
type Release = 'previous' | 'this';

describe.each<{ from: Release; title: string }>([
  { from: 'previous', title: 'a rolling upgrade from the previous release and back' },
  { from: 'this', title: 'a rolling restart of this release, there and back' },
])('$title, under traffic', ({ from }) => {
  let previousRoot: string;
  let env: StackEnv;
  let balancer: Balancer;
  let receiver: Receiver;
  const everyRole: Role[] = [];

  beforeAll(async () => {
    if (from === 'previous') previousRoot = await releaseAt(previousRelease());
    env = stackEnv({ WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s,2s,5s,10s' });
    balancer = await Balancer.start();
    receiver = await startReceiver();
  }, 15 * 60_000);
  afterAll(async () => {
    // ROLE_LOGS: a folder to keep each role's log lines in, for a run that failed
    const logs = process.env.ROLE_LOGS;
    if (logs)
      everyRole.forEach((role, i) => fs.writeFileSync(path.join(logs, `${from}-${i}-${role.name}.log`), role.output()));
    await stopRoles(everyRole, 'kill');
    await balancer?.close();
    await receiver?.close();
  });

  const start = async (role: 'api' | 'worker', release: Release): Promise<Role> => {
    const started = {
      ...(await spawnRole(role, env, release === 'previous' ? { root: previousRoot } : {})),
      name: `${role}-${release}`,
    };
    everyRole.push(started);
    if (role === 'api') {
      const origin = `http://127.0.0.1:${started.port}`;
      await eventually(
        async () => (await call('GET', `${origin}/readyz`).catch(() => undefined))?.status === 200,
        `the ${release} API node ready`,
        60_000,
      );
      balancer.add(origin);
    }
    return started;
  };

  it(
    'loses nothing answered, applies nothing twice, delivers every event, and each release uses what the other made',
    async () => {
      const apis = [await start('api', from), await start('api', from)];
      const workers = [await start('worker', from), await start('worker', from)];
      const admin = new AdminClient(balancer.origin, env.ADMIN_TOKEN!);
      const base = `${balancer.origin}/api/v1`;

      // Made before the roll: the locations (two where customers order, two where registers report
      // failures), registers' keys and orders, the subscription to the customers' locations.
      const locations = [await admin.createLocation('Rolled A', 1000), await admin.createLocation('Rolled B', 1000)];
      const reported = [await admin.createLocation('Reported C', 1000), await admin.createLocation('Reported D', 1000)];
      const subscription = await admin.createWebhook({
        url: receiver.url,
        events: ['order.placed'],
        locationIds: locations.map((l) => l.id),
      });
      receiver.secrets.push(subscription.secret);

      // Every request's status, by the step it was answered in; the last refusals, for a failure's message.
      let step = 'before';
      const statuses = new Map<string, number[]>();
      const refusals: string[] = [];
      const seen = () =>
        JSON.stringify({
          statuses: Object.fromEntries(
            [...statuses].map(([name, list]) => [name, list.filter((s) => s !== 200 && s !== 201)]),
          ),
          refusals: refusals.slice(-10),
        });
      const answered = async (
        method: string,
        url: string,
        options: Parameters<typeof call>[2],
      ): Promise<{ status: number; json?: unknown }> => {
        const res = await call(method, url, { timeoutMs: 15_000, ...options }).catch(() => undefined);
        const status = res?.status ?? 0;
        statuses.set(step, [...(statuses.get(step) ?? []), status]);
        if (status !== 200 && status !== 201)
          refusals.push(`${step}: ${method} ${new URL(url).pathname} ${status} ${res?.text.slice(0, 200) ?? ''}`);
        return { status, json: status === 201 ? res!.json() : undefined };
      };
      let running = true;
      /** Once the traffic is told to stop, a write still unanswered this long after is given up (the test fails). */
      let stopAt = Infinity;
      /** A write retried with its key until it is answered 200 (or 201); undefined if given up. */
      const until200 = async (
        method: string,
        url: string,
        apiKey: string,
        body?: unknown,
      ): Promise<{ json?: unknown } | undefined> => {
        const key = randomUUID();
        for (;;) {
          const res = await answered(method, url, { apiKey, body, headers: { 'Idempotency-Key': key } });
          if (res.status === 200 || res.status === 201) return res;
          if (Date.now() > stopAt + 30_000) return undefined;
          await pause(200);
        }
      };
      const stopTraffic = () => {
        running = false;
        stopAt = Math.min(stopAt, Date.now());
      };
      const loops: Promise<void>[] = [];

      // Registers report failures on counter orders of their own: each report answered 200 counts once.
      const reportsByOrder = new Map<string, number>();
      const reporters: { answered: number; givenUp: number }[] = [];
      const reportLoop = async (locationId: string, deviceId: string, on: AdminClient) => {
        const key = (await on.createServiceSession(locationId, deviceId)).apiKey;
        const reporter = { answered: 0, givenUp: 0 };
        reporters.push(reporter);
        loops.push(
          (async () => {
            while (running) {
              const number = (await on.createOrder(locationId, sampleRows)).number;
              const counted = `${locationId}/${number}`;
              reportsByOrder.set(counted, 0);
              for (let made = 0; running && made < REPORTS_PER_ORDER; made++) {
                if (await until200('POST', `${base}/orders/${number}/failure`, key, { reason: 'rolling' })) {
                  reporter.answered += 1;
                  reportsByOrder.set(counted, reportsByOrder.get(counted)! + 1);
                } else reporter.givenUp += 1;
                await pause(REPORT_EVERY_MS);
              }
            }
          })(),
        );
        return reporter;
      };
      for (const location of reported)
        for (let i = 1; i <= REPORTERS_PER_LOCATION; i++) await reportLoop(location.id, `register-${i}`, admin);

      // Customers order; each submitted order is its till's to complete, as the stream shows it.
      const submitted = new Map<string, { locationId: string; number: number; at: number }>();
      const customerLoop = async (locationId: string, table: number) => {
        while (running) {
          const { apiKey } = await admin.createCustomerSession(locationId, table, table);
          const created = await until200('POST', `${base}/customer/orders`, apiKey, { rows: sampleRows });
          if (!created) return;
          const number = (created.json as OrderRecord).number;
          if (!(await until200('POST', `${base}/customer/orders/${number}/finish`, apiKey))) return;
          if (!(await until200('POST', `${base}/customer/orders/${number}/submit`, apiKey))) return;
          submitted.set(`${locationId}/${number}`, { locationId, number, at: Date.now() });
          await pause(ORDER_EVERY_MS);
        }
      };
      for (const location of locations)
        for (let table = 1; table <= CUSTOMERS_PER_LOCATION; table++) loops.push(customerLoop(location.id, table));

      // Each location's till follows its stream and, after each reconnect, polls its work, as the
      // interface has a register do (an order placed while it was away, below its cursor, is not
      // replayed: it is polled). A customer's order (a customer's number is on it) is completed once.
      const placedOnStream = new Map<string, number>();
      const polled = new Set<string>();
      const completing = new Set<string>();
      const completed = new Set<string>();
      const streamStates: string[] = [];
      const streams = await Promise.all(
        locations.map(async (location) => {
          const till = (await admin.createServiceSession(location.id, 'till')).apiKey;
          const complete = async (order: OrderRecord) => {
            const id = `${location.id}/${order.number}`;
            if (order.state !== 'PLACED' || order.userNumber === undefined || completing.has(id)) return;
            completing.add(id);
            if (await until200('PUT', `${base}/orders/${order.number}/statusupdate`, till, { newState: 'COMPLETED' }))
              completed.add(id);
          };
          return new RegisterClient({ baseUrl: base, apiKey: till }).openStream({
            onState: (state) => streamStates.push(`${step} ${location.name}: ${JSON.stringify(state)}`),
            onOrder: async (order) => {
              const id = `${location.id}/${order.number}`;
              if (order.state === 'PLACED' && order.userNumber !== undefined)
                placedOnStream.set(id, (placedOnStream.get(id) ?? 0) + 1);
              await complete(order);
            },
            onPoll: async (work) => {
              for (const record of work.filter(isOrderRecord)) {
                polled.add(`${location.id}/${record.number}`);
                await complete(record);
              }
            },
          });
        }),
      );

      // When each customer order's `order.placed` first reached the receiver (read as they arrive).
      const deliveredAt = new Map<string, number>();
      let read = 0;
      const readDeliveries = () => {
        for (; read < receiver.received.length; read++) {
          const hook = receiver.received[read]!;
          const order = hook.data.order as { number: number; userNumber?: number };
          const id = `${hook.data.locationId as string}/${order.number}`;
          if (hook.verifiedBy.length > 0 && order.userNumber !== undefined && !deliveredAt.has(id))
            deliveredAt.set(id, Date.now());
        }
      };
      const reading = setInterval(readDeliveries, 100);

      try {
        await eventually(
          () => submitted.size >= 4 && reporters.every((r) => r.answered >= 3),
          'traffic before the roll',
          60_000,
          seen,
        );

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

        // Forward, workers first; then keys and an order made on this release, used from then on.
        await replace(workers, 0, 'worker', 'this');
        await replace(workers, 1, 'worker', 'this');
        await replace(apis, 0, 'api', 'this');
        const onThis = new AdminClient(`http://127.0.0.1:${apis[0]!.port}`, env.ADMIN_TOKEN!);
        const madeHere = await reportLoop(reported[0]!.id, 'register-made-here', onThis);
        await replace(apis, 1, 'api', 'this');
        const migrations = await openDb(env);
        try {
          expect(
            (await migrations.db.collection('migrations').find({}).toArray()).map((doc) => doc._id).sort(),
          ).toEqual(MIGRATIONS.map((m) => m.id).sort());
        } finally {
          await migrations.close();
        }
        step = 'halfway';
        await pause(HALFWAY_MS);

        // And back, in the reverse order: API nodes first, then workers.
        await replace(apis, 1, 'api', from);
        await replace(apis, 0, 'api', from);
        await replace(workers, 1, 'worker', from);
        await replace(workers, 0, 'worker', from);
        const rollEnded = Date.now();
        step = 'after';
        await eventually(
          () => madeHere.answered >= 3,
          'reports with a key made on this release answered after the roll',
          30_000,
          seen,
        );
        await pause(Math.max(0, rollEnded + HALFWAY_MS - Date.now()));

        stopTraffic();
        await Promise.all(loops);
        expect(reporters.map((r) => r.givenUp)).toEqual(reporters.map(() => 0));
        const notCompleted = () => [...submitted.keys()].filter((id) => !completed.has(id));
        await eventually(
          () => notCompleted().length === 0,
          'every submitted order completed from the stream',
          30_000,
          () =>
            JSON.stringify({
              notCompleted: notCompleted().map((id) => ({
                id,
                placedOnStream: placedOnStream.get(id) ?? 0,
                completing: completing.has(id),
              })),
              streamStates: streamStates.slice(-20),
              ...JSON.parse(seen()),
            }),
        );

        // Every submitted order's `order.placed` delivered within 30 s of the roll's end.
        const missing = () => [...submitted.keys()].filter((id) => !deliveredAt.has(id));
        try {
          await eventually(
            () => missing().length === 0,
            'every order.placed delivered',
            Math.max(1, rollEnded + DELIVERED_WITHIN_MS - Date.now()),
          );
        } catch {
          throw new Error(
            await whereMissing(
              env,
              missing(),
              [...submitted.values()].filter((order) => order.at >= rollEnded).length,
              submitted.size,
            ),
          );
        }
        expect(receiver.received.every((hook) => hook.verifiedBy.length > 0)).toBe(true);

        // UPGRADE_REPORT: a file to write what the roll did (the figures of docs/upgrades.md)
        if (process.env.UPGRADE_REPORT) {
          const steps = Object.fromEntries(
            [...statuses].map(([name, list]) => [
              name,
              { requests: list.length, answered: list.filter((s) => s === 200 || s === 201).length },
            ]),
          );
          const lastDelivery = Math.max(...deliveredAt.values()) - rollEnded;
          const report = {
            from,
            drains,
            steps,
            reports: reporters.map((r) => r.answered),
            submitted: submitted.size,
            webhooks: receiver.received.length,
            lastDeliveryAfterRollMs: lastDelivery,
            refusals,
          };
          fs.writeFileSync(
            process.env.UPGRADE_REPORT.replace(/(\.json)?$/, `-${from}.json`),
            JSON.stringify(report, null, 2),
          );
        }
        for (const drain of drains)
          expect(`${drain.step}: exit ${drain.code}, ${drain.ms < DRAIN_BOUND_MS ? 'within' : 'past'} 40 s`).toBe(
            `${drain.step}: exit 0, within 40 s`,
          );
        for (const [name, list] of statuses) {
          const ok = list.filter((status) => status === 200 || status === 201).length;
          expect(
            `${name}: ${ok / list.length >= 0.99 ? 'at least' : 'under'} 99 % answered (${ok} of ${list.length})`,
          ).toMatch(/at least 99 %/);
        }

        // Nothing answered lost or doubled; every order on the stream (each version once).
        const db = await openDb(env);
        try {
          for (const [counted, reports] of reportsByOrder) {
            const [locationId, number] = counted.split('/');
            expect(`${counted}: ${(await db.order(locationId!, Number(number)))!.failureCount}`).toBe(
              `${counted}: ${reports}`,
            );
          }
        } finally {
          await db.close();
        }
        // each on the stream at most once, and on the stream or in a poll after a reconnect
        expect([...placedOnStream].filter(([, count]) => count > 1)).toEqual([]);
        expect([...submitted.keys()].filter((id) => !placedOnStream.has(id) && !polled.has(id))).toEqual([]);
      } finally {
        stopTraffic();
        clearInterval(reading);
        await Promise.all(streams.map((stream) => stream.close()));
        await Promise.all(loops);
      }
    },
    12 * 60_000,
  );
});

/**
 * Where the events of orders whose `order.placed` was not delivered are (the first 20 of them):
 * still in their order's outbox, in the event log owing the delivery, or settled.
 */
async function whereMissing(
  env: StackEnv,
  missing: string[],
  submittedAfter: number,
  submitted: number,
): Promise<string> {
  const db = await openDb(env);
  try {
    const where = { inOutbox: 0, owing: 0, settled: 0, nowhere: 0 };
    for (const id of missing.slice(0, 20)) {
      const [locationId, number] = id.split('/');
      const placed = await db.db.collection('events').findOne({
        type: 'order.placed',
        locationId,
        'data.order.number': Number(number),
        'data.order.userNumber': { $exists: true },
      });
      if (placed) where[Object.keys(placed.undelivered ?? {}).length > 0 ? 'owing' : 'settled'] += 1;
      else if (
        Object.values((await db.order(locationId!, Number(number)))?.outbox ?? {}).some(
          (entry) => entry.type === 'order.placed',
        )
      )
        where.inOutbox += 1;
      else where.nowhere += 1;
    }
    const holding = await db.db
      .collection('orders')
      .countDocuments({ $or: [{ outboxCount: { $gt: 0 } }, { outboxDue: { $exists: true } }] });
    const owing = await db.db.collection('events').countDocuments({ pendingDeliveries: { $gt: 0 } });
    const attempts = await db.db.collection('webhookDeliveries').countDocuments({});
    return `${missing.length} of ${submitted} submitted orders' order.placed not delivered within 30 s of the roll's end (${submittedAfter} submitted after it); of the first 20: ${JSON.stringify(where)}; orders holding events ${holding}, events owing deliveries ${owing}, attempts logged ${attempts}; ${missing.slice(0, 10).join(', ')}`;
  } finally {
    await db.close();
  }
}
