/**
 * The service on a Redis Cluster (3 masters, 3 replicas): the register's work as on one Redis,
 * the transition queue's partitions spread over the masters with each location on one partition,
 * sharded pub/sub (a location's channel on its slot's master only), Bull Board showing every
 * partition.
 */
import { Cluster } from 'ioredis';
import { Queue } from 'bullmq';
import { locationsChannel } from '@pos/shared/events/location-changes';
import { locationChannel } from '@pos/shared/events/announcements';
import { sessionsChannel } from '@pos/shared/events/session-changes';
import type { OrderActionJob } from '@pos/shared/queue/jobs';
import { TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import { partitionLayout, partitionOf } from '@pos/shared/queue/partitions';
import { slotOf } from '@pos/shared/redis';
import { masterOf, masters, onCluster, onNode, portsOf } from '../support/cluster';
import { registerAt } from '../support/fixtures';
import { adminHeader, call, sampleRows, statusUpdate } from '../support/http';
import { metricValue, scrapeMetrics } from '../support/metrics';
import { streamPath, TestStream } from '../support/sse-client';
import { startStack } from '../support/stack';
import { eventually } from '../support/wait';

const clusterUrl = () => process.env.TEST_REDIS_CLUSTER_URL!;

describe('on a Redis Cluster', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    // a short presence window and order deadline, for the presence and deadline test
    stack = await startStack({ ...onCluster(), PRESENCE_WINDOW: '2s', ORDER_DEADLINE: '1s' });
  });
  afterAll(() => stack.close());

  it('runs the register flow, with the location’s events on its shard only and nothing on classic pub/sub', async () => {
    const { key, location } = await registerAt(stack, 'Cluster Street');
    const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: key });
    try {
      await stream.preamble();
      const order = await stack.admin.createOrder(location.id, sampleRows, 4);
      expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json()).toEqual([order]);

      const failed = await call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, {
        apiKey: key,
        body: { reason: 'printer jam' },
      });
      expect(failed.status).toBe(200);
      expect(failed.json()).toMatchObject({ number: order.number, state: 'PLACED', failedTime: expect.any(String) });
      const done = await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED');
      expect(done.status).toBe(200);
      expect(done.json()).toMatchObject({ state: 'COMPLETED' });
      const command = await stack.admin.createCommand(location.id, 'REQUEST_BILL', 4);
      const acknowledged = await call('DELETE', `${stack.baseUrl}/commands/${command.number}`, { apiKey: key });
      expect(acknowledged.json()).toEqual(command);

      await stream.eventCount(4);
      expect(stream.events.map((e) => [e.event, e.id, e.json().state])).toEqual([
        ['order', '1.0', 'PLACED'],
        ['order', '1.0', 'PLACED'],
        ['order', '1.0', 'COMPLETED'],
        ['command', '1.1', 'PLACED'],
      ]);
      expect(stream.events[2]!.json()).toEqual(done.json());

      // Sharded pub/sub: each of the deployment's channels (the location's, the node's reply
      // channel, the session-change channel, the workers' location-change channel) is known to
      // the master of its slot alone; classic pub/sub carries none of them.
      const prefix = stack.env.REDIS_PREFIX!;
      const sharded = new Map<number, string[]>();
      for (const port of (await masters(clusterUrl())).keys()) {
        sharded.set(port, (await onNode<string[]>(port, 'PUBSUB', 'SHARDCHANNELS', `${prefix}:*`)).sort());
      }
      const channel = locationChannel(prefix, location.id);
      const reply = [...sharded.values()].flat().find((name) => name.startsWith(`${prefix}:reply:`))!;
      expect(reply).toBeDefined();
      const expected = new Map<number, string[]>([...sharded.keys()].map((port) => [port, []]));
      for (const name of [channel, reply, sessionsChannel(prefix), locationsChannel(prefix)])
        expected.get(await masterOf(clusterUrl(), slotOf(name)))!.push(name);
      expect(sharded).toEqual(new Map([...expected].map(([port, names]) => [port, names.sort()])));
      for (const port of portsOf(clusterUrl()))
        expect(await onNode(port, 'PUBSUB', 'CHANNELS', `${prefix}:*`)).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it('spreads the partitions over the masters and keeps each location’s jobs on its partition', async () => {
    const prefix = stack.env.REDIS_PREFIX!;
    const layout = partitionLayout(prefix, 6, true);
    // Six partitions (the cluster default), two on each of the three masters.
    const owners = await Promise.all(layout.map((p) => masterOf(clusterUrl(), slotOf(p.prefix))));
    expect([...(await masters(clusterUrl())).keys()].map((port) => owners.filter((o) => o === port).length)).toEqual([
      2, 2, 2,
    ]);

    const locations = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const { key, location } = await registerAt(stack, `Branch ${i}`, 10);
        const order = await stack.admin.createOrder(location.id, sampleRows);
        for (let report = 0; report < 2; report++) {
          const res = await call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, { apiKey: key, body: {} });
          expect(res.status).toBe(200);
        }
        return location.id;
      }),
    );

    const connection = new Cluster(portsOf(clusterUrl()).map((port) => ({ host: '127.0.0.1', port })));
    try {
      const byPartition = await Promise.all(
        layout.map(async (partition) => {
          const queue = new Queue(TRANSITION_QUEUE, { connection, prefix: partition.prefix });
          const jobs = await queue.getJobs(['completed']);
          await queue.close();
          return jobs.map((job) => (job.data as OrderActionJob).scope.locationId);
        }),
      );
      // Each location's 2 reports went to its partition, and only there.
      for (const locationId of locations) {
        const found = byPartition.map((ids) => ids.filter((id) => id === locationId).length);
        expect(found).toEqual(layout.map((p) => (p.index === partitionOf(locationId, 6) ? 2 : 0)));
      }
      // Twelve locations do not all hash to one master's partitions (a chance of 3^-11).
      const busy = new Set(
        byPartition.flatMap((ids, index) => (ids.some((id) => locations.includes(id)) ? [owners[index]] : [])),
      );
      expect(busy.size).toBeGreaterThan(1);
    } finally {
      connection.disconnect();
    }

    const board = await call('GET', `${stack.origin}/admin/queues/api/queues?status=latest&page=1&jobsPerPage=10`, {
      headers: adminHeader(stack.env),
    });
    expect(board.status).toBe(200);
    const names = (board.json().queues as Array<{ name: string }>).map((q) => q.name).sort();
    // every partition, and the lifecycle, deadline, snooze end and webhook delivery jobs' own queues
    expect(names).toEqual(
      [
        ...layout.map((p) => `${p.label}:order-work`),
        'order-lifecycle',
        'order-deadlines',
        'snooze-ends',
        'webhook-delivery',
      ].sort(),
    );
  });

  it("keeps keyed answers (a record and its scope's count share a slot), and reports each master's memory on /metrics", async () => {
    const { key, location } = await registerAt(stack, 'Cluster keys');
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const report = () =>
      call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, {
        apiKey: key,
        headers: { 'Idempotency-Key': 'cluster-retry' },
        body: {},
      });
    const first = await report();
    expect(first.status).toBe(200);
    const again = await report();
    expect([again.status, again.headers.get('idempotent-replayed'), again.text]).toEqual([200, 'true', first.text]);

    const samples = await scrapeMetrics(stack.origin);
    const reported = (name: string) =>
      samples
        .filter((s) => s.name === name)
        .map((s) => ({ port: Number(s.labels.node!.split(':').pop()), value: s.value }));
    const byNumber = (a: number, b: number) => a - b;
    const ports = [...(await masters(clusterUrl())).keys()].sort(byNumber);
    expect(
      reported('pos_redis_memory_used_bytes')
        .map((r) => r.port)
        .sort(byNumber),
    ).toEqual(ports);
    expect(reported('pos_redis_memory_used_bytes').every((r) => r.value > 0)).toBe(true);
    expect(
      reported('pos_redis_memory_max_bytes')
        .map((r) => r.port)
        .sort(byNumber),
    ).toEqual(ports);
  });

  it('answers /readyz with every master answering', async () => {
    const ready = await call('GET', `${stack.origin}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', mongo: 'ok', redis: 'ok' });
  });

  it('keeps presence across the shards, sweeps it, and marks an overdue order (hash-tagged deadline and presence queues)', async () => {
    const { key, location, sessionId } = await registerAt(stack, 'Cluster Presence');
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).status).toBe(200);
    expect(await stack.admin.getPresence(location.id)).toMatchObject({
      online: true,
      registers: [expect.objectContaining({ sessionId, streams: 0 })],
    });
    await eventually(async () => (await stack.admin.getLocation(location.id)).online, 'the sweep announcing it online');

    // (the earlier tests' orders go overdue too, under the same 1 s deadline: once each is the
    // non-cluster test's to show; here, that it is counted)
    const counted = await metricValue(stack.origin, 'pos_orders_overdue_total');
    const order = await stack.admin.createOrder(location.id, sampleRows);
    await eventually(
      async () =>
        (await stack.admin.listOrders(location.id, 'PLACED', { overdue: true })).some((o) => o.number === order.number),
      'the order overdue',
    );
    await eventually(
      async () => (await metricValue(stack.origin, 'pos_orders_overdue_total')) > counted,
      'the overdue count',
    );
  });
});
