/**
 * A Redis Cluster master killed under load from 16 registers (two API processes, two worker
 * processes, a cluster of its own: this test kills one of its masters). What it may cost is the
 * requests in flight: each answers 200, 503 with Retry-After, or drops; none answers 500 or waits
 * past JOB_TIMEOUT. Every report answered 200 is applied exactly once, the order's version moves
 * once per applied report, the workers go on consuming the failed master's partitions once its
 * replica has taken over (no restart), /readyz shows the outage and the recovery, and streams
 * held across it end up with every order in its current form.
 */
import { randomUUID } from 'node:crypto';
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { OrderDoc } from '@pos/shared/domain/records';
import { locationChannel } from '@pos/shared/events/announcements';
import { partitionLayout, partitionOf } from '@pos/shared/queue/partitions';
import { slotOf } from '@pos/shared/redis';
import { LocalRedisCluster, startRedisCluster } from '../../scripts/embedded/redis-cluster';
import { masterOf, onCluster, onNode } from '../support/cluster';
import { openDb } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { claimedRequestIds, stopRoles } from '../support/roles';
import { TestStream } from '../support/sse-client';
import { ChildRole, spawnRole, stackEnv } from '../support/stack';
import { eventually, pause } from '../support/wait';

const JOB_TIMEOUT_MS = 4_000;
/** A request's bound: JOB_TIMEOUT, a second for the last look at the job, and slack for a loaded machine. */
const ANSWER_BOUND_MS = JOB_TIMEOUT_MS + 1_000 + 3_000;
const REGISTERS = 16;
const PARTITIONS = 6;

interface Register {
  locationId: string;
  key: string;
  order: number;
}

interface Outcome {
  register: number;
  requestId: string;
  /** The HTTP status, or 0 for a connection that dropped. */
  status: number;
  retryAfter: string | null;
  title?: string;
  ms: number;
  at: number;
}

describe('a Redis Cluster master killed under load', () => {
  let cluster: LocalRedisCluster;
  const roles: ChildRole[] = [];
  beforeAll(async () => {
    // A short node timeout: the dead master is declared failed, and replaced, about a second after the kill.
    cluster = await startRedisCluster({ nodeTimeoutMs: 1_000 });
  });
  afterAll(async () => {
    await stopRoles(roles, 'stop');
    await cluster?.stop();
  });

  it('costs at most the requests in flight, loses nothing answered 200, and the service recovers without a restart', async () => {
    const env = stackEnv(
      onCluster({ JOB_TIMEOUT: `${JOB_TIMEOUT_MS}ms`, QUEUE_PARTITIONS: String(PARTITIONS) }, cluster.url),
    );
    const prefix = env.REDIS_PREFIX!;
    const [nodeA, nodeB, workerA, workerB] = await Promise.all([
      spawnRole('api', env),
      spawnRole('api', env),
      spawnRole('worker', env),
      spawnRole('worker', env),
    ]);
    roles.push(nodeA, nodeB, workerA, workerB);
    const apis = [nodeA, nodeB].map((node) => `http://127.0.0.1:${node.port}`);
    const admin = new AdminClient(apis[0]!, env.ADMIN_TOKEN!);
    const layout = partitionLayout(prefix, PARTITIONS, true);

    const newRegister = async (i: number): Promise<Register> => {
      const location = await admin.createLocation(`Failover ${i}`, 1000);
      const session = await admin.createServiceSession(location.id, `register-${i}`);
      const order = await admin.createOrder(location.id, sampleRows);
      return { locationId: location.id, key: session.apiKey, order: order.number };
    };
    const partitionMaster = (r: Register) =>
      masterOf(cluster.url, slotOf(layout[partitionOf(r.locationId, PARTITIONS)]!.prefix));
    const channelMaster = (r: Register) => masterOf(cluster.url, slotOf(locationChannel(prefix, r.locationId)));

    // The victim serves register 0's partition; the streams follow a location whose channel it serves too.
    const registers: Register[] = [await newRegister(0)];
    const victimPort = await partitionMaster(registers[0]!);
    for (let i = 1; i < REGISTERS; i++) registers.push(await newRegister(i));
    let watched = -1;
    for (let i = 0; watched < 0; i++) {
      for (const [index, register] of registers.entries())
        if (watched < 0 && (await channelMaster(register)) === victimPort) watched = index;
      if (watched < 0) registers[REGISTERS - 1] = await newRegister(REGISTERS + i);
    }

    const streams = await Promise.all(
      apis.map((api) =>
        TestStream.open(`${api}/api/v1/notifications/service/stream`, { apiKey: registers[watched]!.key }),
      ),
    );
    try {
      // 16 registers reporting failures as fast as they are answered, through either node.
      const outcomes: Outcome[] = [];
      let stopping = false;
      const load = registers.map(async (register, index) => {
        for (let n = 0; !stopping; n++) {
          const requestId = randomUUID();
          const started = Date.now();
          try {
            const res = await call('POST', `${apis[n % 2]}/api/v1/orders/${register.order}/failure`, {
              apiKey: register.key,
              headers: { 'X-Request-Id': requestId },
              body: { reason: 'paper out' },
            });
            const title = res.status === 200 ? undefined : (res.json() as { title?: string }).title;
            outcomes.push({
              register: index,
              requestId,
              status: res.status,
              retryAfter: res.headers.get('retry-after'),
              title,
              ms: Date.now() - started,
              at: Date.now(),
            });
          } catch {
            outcomes.push({
              register: index,
              requestId,
              status: 0,
              retryAfter: null,
              ms: Date.now() - started,
              at: Date.now(),
            });
          }
        }
      });
      const answered = (index: number, since = 0) =>
        outcomes.filter((o) => o.register === index && o.status === 200 && o.at > since).length;
      await eventually(
        () => registers.every((_, i) => answered(i) >= 2),
        'every register answered before the kill',
        30_000,
      );

      // /readyz of both nodes, watched from before the kill.
      const readiness: Array<{ node: number; status: number; at: number }> = [];
      const watching = (async () => {
        while (!stopping) {
          for (const [node, api] of apis.entries()) {
            const res = await call('GET', `${api}/readyz`).catch(() => ({ status: 0 }));
            readiness.push({ node, status: res.status, at: Date.now() });
          }
          await pause(100); // the watcher's pace
        }
      })();

      const victim = cluster.nodes.find((node) => node.port === victimPort)!;
      const killedAt = Date.now();
      await cluster.kill(victim);

      // The replica takes over; both nodes were unready, and are ready again.
      await eventually(async () => (await partitionMaster(registers[0]!)) !== victimPort, 'a replica promoted', 30_000);
      const recovered = (node: number) => {
        const seen = readiness.filter((r) => r.node === node && r.at > killedAt);
        const down = seen.findIndex((r) => r.status === 503);
        return down >= 0 && seen.slice(down).some((r) => r.status === 200);
      };
      await eventually(() => recovered(0) && recovered(1), '/readyz 503 then 200 on both nodes', 30_000);
      const recoveredAt = Date.now();
      // The workers consume every partition again, the failed master's included.
      await eventually(
        () => registers.every((_, i) => answered(i, recoveredAt) >= 3),
        'every register answered after the recovery',
        30_000,
      );
      stopping = true;
      await Promise.all([...load, watching]);

      // What the failover cost: requests in flight, answered 503 (with Retry-After) or dropped, each in time.
      for (const outcome of outcomes) {
        expect([200, 503, 0]).toContain(outcome.status);
        if (outcome.status === 503) expect([outcome.retryAfter, outcome.title]).toEqual(['1', 'Service unavailable']);
        expect(outcome.ms).toBeLessThan(ANSWER_BOUND_MS);
      }
      expect(workerA.process.exitCode).toBeNull();
      expect(workerB.process.exitCode).toBeNull();

      // Exactly once: each report answered 200 was applied by one worker, once; nothing was applied twice.
      // (by the ids the registers sent: the workers' lines carry the
      // service's, which the API nodes' access lines map)
      const appliedLines = () => {
        const claimed = claimedRequestIds([nodeA, nodeB]);
        const counts = new Map<string, number>();
        for (const worker of [workerA, workerB]) {
          for (const line of worker.output().split('\n')) {
            if (!line.includes('"msg":"order transition applied"')) continue;
            const { requestId } = JSON.parse(line) as { requestId: string };
            const sent = claimed.get(requestId) ?? requestId;
            counts.set(sent, (counts.get(sent) ?? 0) + 1);
          }
        }
        return counts;
      };
      const ok = outcomes.filter((o) => o.status === 200);
      // The last answers' log lines may still be on their way through the workers' pipes.
      await eventually(
        () => ok.every((o) => appliedLines().has(o.requestId)),
        'a log line for every report answered 200',
        10_000,
      ).catch(() => undefined);
      const applied = appliedLines();
      expect(ok.filter((o) => applied.get(o.requestId) !== 1)).toEqual([]);
      expect([...applied].filter(([, count]) => count !== 1)).toEqual([]);

      // In MongoDB: the failure count is the reports applied, and the version moved once for each.
      const db = await openDb(env);
      try {
        for (const [index, register] of registers.entries()) {
          const ids = new Set(outcomes.filter((o) => o.register === index).map((o) => o.requestId));
          const appliedHere = [...applied.keys()].filter((id) => ids.has(id)).length;
          const doc = (await db.order(register.locationId, register.order)) as OrderDoc;
          expect([index, doc.failureCount, doc.version]).toEqual([index, appliedHere, appliedHere]);
          expect(appliedHere).toBeGreaterThanOrEqual(ok.filter((o) => o.register === index).length);
        }
      } finally {
        await db.close();
      }

      // The streams on both nodes were resubscribed and caught up: each shows the order as it is now.
      const now = await call('GET', `${apis[0]}/api/v1/orders/location`, { apiKey: registers[watched]!.key });
      const current = (now.json() as Array<{ number: number }>).find(
        (record) => record.number === registers[watched]!.order,
      );
      for (const stream of streams) {
        const last = () =>
          stream.events
            .filter((e) => e.event === 'order' && e.json().number === current!.number)
            .at(-1)
            ?.json();
        await eventually(
          () => JSON.stringify(last()) === JSON.stringify(current),
          'the stream showing the current order',
          10_000,
        );
        expect(stream.isEnded).toBe(false);
      }
      for (const node of [nodeA, nodeB]) expect(node.output()).toContain('"msg":"redis subscriptions restored"');
      // ... on the master that serves the channel now, once per node.
      const channel = locationChannel(prefix, registers[watched]!.locationId);
      const owner = await masterOf(cluster.url, slotOf(channel));
      expect(owner).not.toBe(victimPort);
      expect(await onNode(owner, 'PUBSUB', 'SHARDNUMSUB', channel)).toEqual([channel, 2]);
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});
