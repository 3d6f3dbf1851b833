/**
 * Streams across API nodes: two API processes and one worker process on one Redis and one
 * MongoDB. Work entering through node B reaches streams held by node A.
 */
import Redis from 'ioredis';
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { OrderRecord } from '@pos/shared/domain/records';
import { registerAt } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { roleOrigin, stopRoles } from '../support/roles';
import { streamPath, TestStream } from '../support/sse-client';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { eventually } from '../support/wait';

describe('event stream across API nodes', () => {
  let env: StackEnv;
  let nodeA: ChildRole & { port?: number };
  let nodeB: ChildRole & { port?: number };
  let worker: ChildRole;
  let adminB: AdminClient;
  let redis: Redis;
  const open: TestStream[] = [];

  beforeAll(async () => {
    env = stackEnv();
    [nodeA, nodeB, worker] = await Promise.all([
      spawnRole('api', env),
      spawnRole('api', env),
      spawnRole('worker', env),
    ]);
    adminB = new AdminClient(roleOrigin(nodeB), env.ADMIN_TOKEN!);
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(async () => {
    redis?.disconnect();
    await stopRoles([nodeA, nodeB, worker], 'stop');
  });

  async function connect(node: { port?: number }, apiKey: string, query = '', headers: Record<string, string> = {}) {
    const stream = await TestStream.open(`${roleOrigin(node)}${streamPath}${query}`, { apiKey, headers });
    open.push(stream);
    expect(stream.status).toBe(200);
    await stream.preamble();
    return stream;
  }

  it('a stream on node A receives the order created and the status changed through node B', async () => {
    const { locationId, key } = await registerAt({ admin: adminB }, 'cross-node');
    const stream = await connect(nodeA, key);

    const order = await adminB.createOrder(locationId, sampleRows, 12);
    await stream.eventCount(1);
    expect(stream.events[0]!.event).toBe('order');
    expect(stream.events[0]!.id).toBe('1.0');
    expect(stream.events[0]!.json()).toEqual(order);

    const updated = await call('PUT', `${roleOrigin(nodeB)}/api/v1/orders/${order.number}/statusupdate`, {
      apiKey: key,
      body: { newState: 'COMPLETED' },
    });
    expect(updated.status).toBe(200);
    await stream.eventCount(2);
    expect(stream.events[1]!.id).toBe('1.0');
    expect(stream.events[1]!.json()).toEqual(updated.json());
    expect(stream.events[1]!.json<OrderRecord>().state).toBe('COMPLETED');

    const command = await adminB.createCommand(locationId, 'READ_TABLE_STATE', 12);
    await stream.eventCount(3);
    expect(stream.events[2]!.event).toBe('command');
    expect(stream.events[2]!.id).toBe('1.1');
    expect(stream.events[2]!.json()).toEqual(command);
  });

  it('reconnecting to node B with node A\u2019s cursor replays exactly the missed work', async () => {
    const { locationId, key } = await registerAt({ admin: adminB }, 'cross-reconnect');
    await adminB.createOrder(locationId, sampleRows);
    const first = await connect(nodeA, key);
    await first.eventCount(1);
    const cursor = first.lastEventId;
    expect(cursor).toBe('1.0');
    first.close();

    const o2 = await adminB.createOrder(locationId, sampleRows);
    const c1 = await adminB.createCommand(locationId, 'REQUEST_BILL');
    const o3 = await adminB.createOrder(locationId, sampleRows);
    expect(
      (
        await call('PUT', `${roleOrigin(nodeA)}/api/v1/orders/${o3.number}/statusupdate`, {
          apiKey: key,
          body: { newState: 'ABORTED' },
        })
      ).status,
    ).toBe(200);

    const byHeader = await connect(nodeB, key, '', { 'Last-Event-ID': cursor });
    const byQuery = await connect(nodeA, key, '?orderNumber=1&commandNumber=0');
    const o4 = await adminB.createOrder(locationId, sampleRows);
    for (const stream of [byHeader, byQuery]) {
      await stream.eventCount(3);
      expect(stream.events.map((e) => [e.event, e.id, e.json()])).toEqual([
        ['order', '2.0', o2],
        ['command', '2.1', c1],
        ['order', '4.1', o4],
      ]);
    }
  });

  it('closing the session through node B ends its stream on node A; the access line tells', async () => {
    const { key, sessionId } = await registerAt({ admin: adminB }, 'cross-close');
    const stream = await TestStream.open(`${roleOrigin(nodeA)}${streamPath}?api_key=${key}`, {
      headers: { 'X-Request-Id': 'cluster-close-1' },
    });
    open.push(stream);
    await stream.preamble();
    await adminB.closeSession(sessionId);
    await stream.end();
    const lines = () =>
      nodeA
        .output()
        .split('\n')
        .filter((line) => line.includes('"claimedRequestId":"cluster-close-1"'));
    await eventually(() => lines().some((line) => line.includes('"msg":"request"')), 'the access line');
    const access = JSON.parse(lines().find((line) => line.includes('"msg":"request"'))!);
    expect(access).toMatchObject({ status: 200, url: `${streamPath}?api_key=[REDACTED]` });
    expect(
      lines().some((line) => line.includes('"msg":"stream ended"') && line.includes('"reason":"session-closed"')),
    ).toBe(true);
    expect(nodeA.output()).not.toContain(key);
  });

  it('streams opened and dropped on both nodes leave no location subscribed in Redis', async () => {
    const registers = await Promise.all([1, 2, 3].map((i) => registerAt({ admin: adminB }, `cross-many-${i}`)));
    const streams = await Promise.all(
      Array.from({ length: 30 }, (_, i) => connect(i % 2 === 0 ? nodeA : nodeB, registers[i % 3]!.key)),
    );
    const channels = async () => (await redis.pubsub('CHANNELS', `${env.REDIS_PREFIX}:loc:*`)) as string[];
    expect((await channels()).sort()).toEqual(registers.map((r) => `${env.REDIS_PREFIX}:loc:${r.locationId}`).sort());
    expect(await redis.pubsub('NUMSUB', `${env.REDIS_PREFIX}:loc:${registers[0]!.locationId}`)).toEqual([
      `${env.REDIS_PREFIX}:loc:${registers[0]!.locationId}`,
      2, // one subscription per node, however many streams
    ]);
    for (const stream of streams) stream.close();
    await eventually(async () => (await channels()).length === 0, 'no location channel subscribed');
  });

  it('SIGTERM ends a node\u2019s open streams and exits 0', async () => {
    // a third node, to stop: the file's other tests keep A and B
    const nodeC = await spawnRole('api', env);
    try {
      const { key } = await registerAt({ admin: adminB }, 'cross-shutdown');
      const stream = await connect(nodeC, key);
      const code = await nodeC.stop();
      expect(code).toBe(0);
      await stream.end();
      expect(nodeC.output()).toContain('"reason":"shutdown"');
    } finally {
      await stopRoles([nodeC], 'kill');
    }
  });
});
