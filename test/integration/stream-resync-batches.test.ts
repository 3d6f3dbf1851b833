/**
 * A node's re-read after a Redis reconnect (docs/event-stream.md#what-a-resync-costs): its locations are
 * read in batches, a few MongoDB commands per batch rather than per stream, and streams hold
 * their live events until their location is read, through a MongoDB that stalls, a second loss,
 * and streams that end or open meanwhile. API nodes and a worker as child processes; node A
 * reaches Redis through a proxy the test cuts.
 */
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { OrderRecord } from '@pos/shared/domain/records';
import { RESYNC_BATCH_LOCATIONS } from '@pos/api/stream/resync-scheduler';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { startJongodb } from '../../scripts/embedded/jongodb';
import { call, sampleRows } from '../support/http';
import { metricValue, mongoCommandsFor } from '../support/metrics';
import { logged, roleOrigin, stopRoles } from '../support/roles';
import { streamPath, TestStream } from '../support/sse-client';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { TcpProxy } from '../../scripts/embedded/tcp-proxy';
import { eventually } from '../support/wait';

/** Runs `task` over `items`, `width` at a time, keeping their order. */
async function inParallel<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index]!);
      }
    }),
  );
  return results;
}

const summary = (stream: TestStream) =>
  stream.events.map((e) => [e.id, e.json<OrderRecord>().number, e.json<OrderRecord>().state]);

describe('a node with many locations re-reads them in batches', () => {
  const LOCATIONS = 300;
  let env: StackEnv;
  let proxy: TcpProxy;
  let nodeA: ChildRole & { port?: number };
  let nodeB: ChildRole & { port?: number };

  beforeAll(async () => {
    env = stackEnv();
    proxy = await TcpProxy.start(env.REDIS_URL!);
    [nodeA, nodeB] = await Promise.all([spawnRole('api', { ...env, REDIS_URL: proxy.url() }), spawnRole('api', env)]);
  });
  afterAll(async () => {
    await stopRoles([nodeA, nodeB], 'kill');
    await proxy?.close();
  });

  it(`costs a few MongoDB commands per batch of ${RESYNC_BATCH_LOCATIONS} locations, not per stream; each stream gets what it missed, once`, async () => {
    const admin = new AdminClient(roleOrigin(nodeB), env.ADMIN_TOKEN!);
    const registers = await inParallel(
      Array.from({ length: LOCATIONS }, (_, i) => i),
      8,
      async (i) => {
        const location = await admin.createLocation(`batch-${i}`);
        const session = await admin.createServiceSession(location.id, `register-${i}`);
        return { locationId: location.id, key: session.apiKey };
      },
    );
    const streams = await inParallel(registers, 16, async ({ key }) => {
      const stream = await TestStream.open(`${roleOrigin(nodeA)}${streamPath}`, { apiKey: key });
      expect(stream.status).toBe(200);
      await stream.preamble();
      return stream;
    });
    try {
      // Twenty registers get an order before the loss, twenty more one while node A is away.
      const before = registers.slice(0, 20);
      const during = registers.slice(20, 40);
      const placedBefore = await Promise.all(before.map(({ locationId }) => admin.createOrder(locationId, sampleRows)));
      await Promise.all(before.map((_, i) => streams[i]!.eventCount(1, 10_000)));

      await proxy.cut();
      await eventually(
        () => logged(nodeA, 'redis subscriptions lost; restoring them') === 1,
        'node A to see Redis lost',
        10_000,
      );
      const placedDuring = await Promise.all(during.map(({ locationId }) => admin.createOrder(locationId, sampleRows)));

      const commands = await mongoCommandsFor(roleOrigin(nodeA), async () => {
        await proxy.restore();
        await eventually(
          () => logged(nodeA, 'streams re-read after redis reconnect') === 1,
          'the re-read to end',
          20_000,
        );
      });

      const batches = await metricValue(roleOrigin(nodeA), 'pos_stream_resync_batches_total', { outcome: 'read' });
      expect(batches).toBe(Math.ceil(LOCATIONS / RESYNC_BATCH_LOCATIONS));
      // Three reads a batch (work, orders written since, sessions), and a
      // getMore for an answer of over 101 documents.
      expect(commands).toBeLessThanOrEqual(5 * batches);
      expect(await metricValue(roleOrigin(nodeA), 'pos_stream_resyncs_total')).toBe(1);

      // A marker on each of those forty, then: each stream has what it missed, once, and nothing else.
      const markers = await Promise.all(
        [...before, ...during].map(({ locationId }) => admin.createOrder(locationId, sampleRows)),
      );
      await Promise.all(before.map((_, i) => streams[i]!.eventCount(2, 10_000)));
      await Promise.all(during.map((_, i) => streams[20 + i]!.eventCount(2, 10_000)));
      before.forEach((_, i) => {
        expect(summary(streams[i]!)).toEqual([
          ['1.0', placedBefore[i]!.number, 'PLACED'],
          ['2.0', markers[i]!.number, 'PLACED'],
        ]);
      });
      during.forEach((_, i) => {
        expect(summary(streams[20 + i]!)).toEqual([
          ['1.0', placedDuring[i]!.number, 'PLACED'],
          ['2.0', markers[20 + i]!.number, 'PLACED'],
        ]);
      });
      expect(streams.slice(40).filter((stream) => stream.events.length > 0)).toEqual([]);
      expect(streams.filter((stream) => stream.isEnded)).toEqual([]);
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});

describe('a re-read that meets a stalled MongoDB, a second loss, and streams that come and go', () => {
  let mongo: ChildServer;
  let env: StackEnv;
  let proxy: TcpProxy;
  let nodeA: ChildRole & { port?: number };
  let nodeB: ChildRole & { port?: number };
  let worker: ChildRole;

  beforeAll(async () => {
    // A MongoDB of this file's own, to stall (SIGSTOP) without touching the run's.
    mongo = await startJongodb();
    env = stackEnv({ MONGO_URL: mongo.url });
    proxy = await TcpProxy.start(env.REDIS_URL!);
    [nodeA, nodeB, worker] = await Promise.all([
      spawnRole('api', { ...env, REDIS_URL: proxy.url() }),
      spawnRole('api', env),
      spawnRole('worker', env),
    ]);
  });
  afterAll(async () => {
    await stopRoles([nodeA, nodeB, worker], 'kill');
    await proxy?.close();
    await mongo?.stop();
  });

  it('holds its streams until their read is in, reads again after a loss during the read, and sends each change once', async () => {
    const admin = new AdminClient(roleOrigin(nodeB), env.ADMIN_TOKEN!);
    const location = await admin.createLocation('stalled-resync', 3);
    const [keyOne, keyTwo, keyThree] = await Promise.all(
      ['one', 'two', 'three'].map(async (device) => (await admin.createServiceSession(location.id, device)).apiKey),
    );
    const orders: OrderRecord[] = [];
    for (let i = 0; i < 3; i++) orders.push(await admin.createOrder(location.id, sampleRows));
    const one = await TestStream.open(`${roleOrigin(nodeA)}${streamPath}`, { apiKey: keyOne });
    const two = await TestStream.open(`${roleOrigin(nodeA)}${streamPath}`, { apiKey: keyTwo });
    let opening: { stream: TestStream; opened: Promise<TestStream> } | undefined;
    const pid = mongo.process.pid!;
    try {
      await Promise.all([one.eventCount(3), two.eventCount(3)]);

      await proxy.cut();
      await eventually(
        () => logged(nodeA, 'redis subscriptions lost; restoring them') === 1,
        'node A to see Redis lost',
        10_000,
      );
      const fourth = await admin.createOrder(location.id, sampleRows);

      process.kill(pid, 'SIGSTOP');
      try {
        await proxy.restore();
        // Logged as the re-read starts: its MongoDB reads now wait.
        await eventually(() => logged(nodeA, 'redis subscriptions restored') === 1, 'node A to resubscribe', 10_000);
        two.close(); // a stream that ends during the re-read
        // one that opens during it (its own reads wait too)
        opening = TestStream.start(`${roleOrigin(nodeA)}${streamPath}`, {
          apiKey: keyThree,
          headers: { 'Last-Event-ID': '3.0' },
        });
        await proxy.cut(); // a second loss while the read is in flight
        await eventually(
          () => logged(nodeA, 'redis subscriptions lost; restoring them') === 2,
          'node A to see Redis lost again',
          10_000,
        );
        expect(one.events).toHaveLength(3);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      const three = await opening.opened;
      expect(three.status).toBe(200);
      await three.preamble(10_000);
      // The first read is sent, though the second loss is not read yet.
      await one.eventCount(4, 10_000);

      // Written during the second outage: a re-announcement, a state change, new work.
      const report = await call('POST', `${roleOrigin(nodeB)}/api/v1/orders/1/failure`, { apiKey: keyOne });
      const completed = await call('PUT', `${roleOrigin(nodeB)}/api/v1/orders/2/statusupdate`, {
        apiKey: keyOne,
        body: { newState: 'COMPLETED' },
      });
      const fifth = await admin.createOrder(location.id, sampleRows);
      expect([report.status, completed.status]).toEqual([200, 200]);
      expect(report.json<OrderRecord>()).toMatchObject({ state: 'PLACED', failedTime: expect.any(String) });

      await proxy.restore();
      await eventually(
        () => logged(nodeA, 'streams re-read after redis reconnect') === 1,
        'the re-read to end',
        20_000,
      );
      const marker = await admin.createOrder(location.id, sampleRows);
      await one.eventCount(8, 10_000);
      await three.eventCount(5, 10_000);

      const [first, second, third] = orders;
      expect(one.events.map((e) => [e.id, e.json()])).toEqual([
        ['1.0', first],
        ['2.0', second],
        ['3.0', third],
        ['4.0', fourth],
        ['4.0', report.json()],
        ['4.0', completed.json()],
        ['5.0', fifth],
        ['6.0', marker],
      ]);
      // Opened at 3.0 during the first re-read: its replay, then what the second outage changed.
      expect(three.events.map((e) => [e.id, e.json()])).toEqual([
        ['4.0', fourth],
        ['4.0', report.json()],
        ['4.0', completed.json()],
        ['5.0', fifth],
        ['6.0', marker],
      ]);
      expect(await metricValue(roleOrigin(nodeA), 'pos_stream_resyncs_total')).toBe(1);
      expect(await metricValue(roleOrigin(nodeA), 'pos_streams_open')).toBe(2);
      expect(nodeA.output()).not.toContain('resync-failed');
    } finally {
      process.kill(pid, 'SIGCONT');
      one.close();
      two.close();
      opening?.stream.close();
    }
  });
});
