/**
 * Streams across API nodes on a Redis Cluster: two API processes and one worker process. Work
 * entering through node B reaches streams held by node A over sharded pub/sub; closing a session
 * through node B ends its streams on node A and aborts a customer's orders; dropped streams leave
 * no subscription behind on any shard.
 */
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { OrderRecord } from '@pos/shared/domain/records';
import { locationChannel } from '@pos/shared/events/announcements';
import { slotOf } from '@pos/shared/redis';
import { masterOf, masters, onCluster, onNode } from '../support/cluster';
import { registerAt } from '../support/fixtures';
import { adminHeader, call, sampleRows } from '../support/http';
import { roleOrigin, stopRoles } from '../support/roles';
import { streamPath, TestStream } from '../support/sse-client';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { eventually } from '../support/wait';

const clusterUrl = () => process.env.TEST_REDIS_CLUSTER_URL!;

describe('event streams across API nodes on a Redis Cluster', () => {
  let env: StackEnv;
  let nodeA: ChildRole & { port?: number };
  let nodeB: ChildRole & { port?: number };
  let worker: ChildRole;
  let adminB: AdminClient;
  const open: TestStream[] = [];

  beforeAll(async () => {
    env = stackEnv(onCluster());
    [nodeA, nodeB, worker] = await Promise.all([
      spawnRole('api', env),
      spawnRole('api', env),
      spawnRole('worker', env),
    ]);
    adminB = new AdminClient(roleOrigin(nodeB), env.ADMIN_TOKEN!);
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(async () => {
    await stopRoles([nodeA, nodeB, worker], 'stop');
  });

  async function connect(node: { port?: number }, apiKey: string) {
    const stream = await TestStream.open(`${roleOrigin(node)}${streamPath}`, { apiKey });
    open.push(stream);
    expect(stream.status).toBe(200);
    await stream.preamble();
    return stream;
  }

  it('a stream on node A receives the order created and changed through node B', async () => {
    const { locationId, key } = await registerAt({ admin: adminB }, 'cluster-cross-node');
    const stream = await connect(nodeA, key);

    const order = await adminB.createOrder(locationId, sampleRows, 12);
    await stream.eventCount(1);
    expect(stream.events[0]!.json()).toEqual(order);

    const updated = await call('PUT', `${roleOrigin(nodeB)}/api/v1/orders/${order.number}/statusupdate`, {
      apiKey: key,
      body: { newState: 'COMPLETED' },
    });
    expect(updated.status).toBe(200);
    await stream.eventCount(2);
    expect(stream.events[1]!.json()).toEqual(updated.json());
    expect(stream.events[1]!.json<OrderRecord>().state).toBe('COMPLETED');

    const command = await adminB.createCommand(locationId, 'READ_TABLE_STATE', 12);
    await stream.eventCount(3);
    expect(stream.events.map((e) => [e.event, e.id])).toEqual([
      ['order', '1.0'],
      ['order', '1.0'],
      ['command', '1.1'],
    ]);
    expect(stream.events[2]!.json()).toEqual(command);
  });

  it('closing a customer session through node B aborts its order, seen on node A, and ends the register stream of a closed service session', async () => {
    const { locationId, key, sessionId } = await registerAt({ admin: adminB }, 'cluster-cross-close');
    const customer = await adminB.createCustomerSession(locationId, 7, 3);
    const stream = await connect(nodeA, key);
    const order = await call('POST', `${roleOrigin(nodeB)}/api/v1/customer/orders`, {
      apiKey: customer.apiKey,
      body: { rows: sampleRows },
    });
    expect(order.status).toBe(201);
    const number = order.json<OrderRecord>().number;
    for (const step of ['finish', 'submit']) {
      expect(
        (
          await call('POST', `${roleOrigin(nodeB)}/api/v1/customer/orders/${number}/${step}`, {
            apiKey: customer.apiKey,
          })
        ).status,
      ).toBe(200);
    }
    await stream.eventCount(1);

    expect(
      (
        await call('DELETE', `${roleOrigin(nodeB)}/admin/v1/sessions/${customer.sessionId}`, {
          headers: adminHeader(env),
        })
      ).status,
    ).toBe(204);
    await stream.eventCount(2);
    expect(stream.events.map((e) => e.json<OrderRecord>().state)).toEqual(['PLACED', 'ABORTED']);

    await adminB.closeSession(sessionId);
    await stream.end();
    expect(stream.isEnded).toBe(true);
    await eventually(
      () => nodeA.output().includes('"reason":"session-closed"'),
      'the stream ended for the closed session',
    );
  });

  it('streams opened and dropped on both nodes leave no channel subscribed on any shard', async () => {
    const registers = await Promise.all([1, 2, 3].map((i) => registerAt({ admin: adminB }, `cluster-many-${i}`)));
    const streams = await Promise.all(
      Array.from({ length: 12 }, (_, i) => connect(i % 2 === 0 ? nodeA : nodeB, registers[i % 3]!.key)),
    );
    const subscribed = async () => {
      const all: string[] = [];
      for (const port of (await masters(clusterUrl())).keys()) {
        all.push(...(await onNode<string[]>(port, 'PUBSUB', 'SHARDCHANNELS', `${env.REDIS_PREFIX}:loc:*`)));
      }
      return all.sort();
    };
    const channels = registers.map((r) => locationChannel(env.REDIS_PREFIX!, r.locationId));
    expect(await subscribed()).toEqual([...channels].sort());
    // One subscription per node, however many streams, on the channel's own master.
    const first = channels[0]!;
    expect(await onNode(await masterOf(clusterUrl(), slotOf(first)), 'PUBSUB', 'SHARDNUMSUB', first)).toEqual([
      first,
      2,
    ]);
    for (const stream of streams) stream.close();
    await eventually(async () => (await subscribed()).length === 0, 'no location channel subscribed');
  });
});
