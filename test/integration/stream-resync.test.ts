/**
 * Streams across Redis outages (decisions: "no duplicate between replay and live"): once a node
 * has its subscriptions back, each stream sends what it may have missed and nothing else.
 * API nodes and a worker as child processes, on a Redis of this file's own (restarted for real).
 */
import { MongoClient } from 'mongodb';
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { OrderDoc, OrderRecord } from '@pos/shared/domain/records';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { startRedisServer } from '../../scripts/embedded/redis-server';
import { call, sampleRows } from '../support/http';
import { ReceivedEvent, TestStream } from '../support/sse-client';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { TcpProxy } from '../support/tcp-proxy';

const streamPath = '/api/v1/notifications/service/stream';
const origin = (node: { port?: number }) => `http://127.0.0.1:${node.port}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A register following one location's stream across connections: when a stream ends it
 * reconnects (to the node `next()` names) with the last event id it got, as EventSource does.
 */
class FollowingRegister {
  readonly events: ReceivedEvent[] = [];
  private stream: TestStream | undefined;
  private stopped = false;
  private lastId = '';

  constructor(
    private readonly key: string,
    private readonly next: () => { port?: number },
  ) {}

  async start(node: { port?: number }): Promise<void> {
    await this.connect(node);
  }

  placedCount(number: number): number {
    return this.events.filter((e) => e.event === 'order' && e.json<OrderRecord>().number === number && e.json<OrderRecord>().state === 'PLACED').length;
  }

  async waitFor(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${this.events.map((e) => `${e.id}:${e.data}`).join('\n')}`);
      await pause(20);
    }
  }

  stop(): void {
    this.stopped = true;
    this.stream?.close();
  }

  private async connect(node: { port?: number }): Promise<void> {
    const headers: Record<string, string> = this.lastId ? { 'Last-Event-ID': this.lastId } : {};
    let stream: TestStream;
    try {
      stream = await TestStream.open(`${origin(node)}${streamPath}`, { apiKey: this.key, headers });
    } catch {
      return this.retry();
    }
    if (stream.status !== 200) {
      stream.close();
      return this.retry(); // a 503 while Redis is down
    }
    this.stream = stream;
    let taken = 0;
    const take = () => {
      for (; taken < stream.events.length; taken++) {
        const event = stream.events[taken]!;
        this.events.push(event);
        this.lastId = event.id;
      }
    };
    const watch = setInterval(take, 5);
    void stream.ended.then(() => {
      clearInterval(watch);
      take();
      if (!this.stopped) void this.retry(0);
    });
  }

  private async retry(ms = 200): Promise<void> {
    if (this.stopped) return;
    await pause(ms);
    if (!this.stopped) await this.connect(this.next());
  }
}

describe('streams across a killed node and a Redis restart', () => {
  let redisServer: ChildServer;
  let env: StackEnv;
  let nodeA: ChildRole & { port?: number };
  let nodeB: ChildRole & { port?: number };
  let worker: ChildRole;

  beforeAll(async () => {
    redisServer = await startRedisServer();
    env = stackEnv({ REDIS_URL: redisServer.url });
    [nodeA, nodeB, worker] = await Promise.all([spawnRole('api', env), spawnRole('api', env), spawnRole('worker', env)]);
  });
  afterAll(async () => {
    await Promise.all([nodeA, nodeB, worker].filter(Boolean).map((role) => (role.process.exitCode === null ? role.kill() : undefined)));
    await redisServer?.stop();
  });

  it('every order created through the run reaches every register exactly once as PLACED', async () => {
    const admin = new AdminClient(origin(nodeB), env.ADMIN_TOKEN!);
    const location = await admin.createLocation('kill-and-restart');
    const registers = await Promise.all(
      [nodeA, nodeA, nodeB, nodeB].map(async (node, i) => {
        const session = await admin.createServiceSession(location.id, `register-${i}`);
        const register = new FollowingRegister(session.apiKey, () => nodeB);
        await register.start(node);
        return register;
      }),
    );

    // Orders keep coming through node B the whole time; creating needs only MongoDB, so they
    // go on while Redis is down (their announcements are what the outage loses).
    let creating = true;
    const creator = (async () => {
      while (creating) {
        await admin.createOrder(location.id, sampleRows).catch(() => undefined);
        await pause(40);
      }
    })();

    await pause(1_500);
    await nodeA.kill(); // its registers reconnect to node B with their last event id
    await pause(1_500);
    const port = Number(new URL(redisServer.url).port);
    await redisServer.stop();
    await pause(1_000);
    redisServer = await startRedisServer(port);
    await pause(2_500);
    creating = false;
    await creator;
    const marker = await admin.createOrder(location.id, sampleRows);

    const client = await new MongoClient(env.MONGO_URL!).connect();
    try {
      const numbers = (await client.db(env.MONGO_DB).collection<OrderDoc>('orders').find({ locationId: location.id }).toArray()).map((o) => o.number);
      expect(numbers.length).toBeGreaterThan(50);
      for (const register of registers) {
        await register.waitFor(() => register.placedCount(marker.number) > 0, 'the marker order');
        register.stop();
        const counts = numbers.map((number) => [number, register.placedCount(number)]);
        expect(counts.filter(([, count]) => count !== 1)).toEqual([]);
      }
    } finally {
      await client.close();
      for (const register of registers) register.stop();
    }
  });
});

describe('a node losing Redis while the others go on', () => {
  let env: StackEnv;
  let proxy: TcpProxy;
  let nodeA: ChildRole & { port?: number };
  let nodeB: ChildRole & { port?: number };
  let worker: ChildRole;

  beforeAll(async () => {
    env = stackEnv();
    // Node A reaches Redis through a proxy the test cuts; node B and the worker directly.
    proxy = await TcpProxy.start(env.REDIS_URL!);
    [nodeA, nodeB, worker] = await Promise.all([
      spawnRole('api', { ...env, REDIS_URL: proxy.url() }),
      spawnRole('api', env),
      spawnRole('worker', env),
    ]);
  });
  afterAll(async () => {
    await Promise.all([nodeA, nodeB, worker].filter(Boolean).map((role) => (role.process.exitCode === null ? role.kill() : undefined)));
    await proxy?.close();
  });

  it('re-announcements and state changes below the cursor made meanwhile arrive once; what did not change, never', async () => {
    const admin = new AdminClient(origin(nodeB), env.ADMIN_TOKEN!);
    const location = await admin.createLocation('lost-subscription', 2);
    const session = await admin.createServiceSession(location.id, 'register');
    const key = session.apiKey;
    // One at a time: concurrent creates take their numbers in whatever order they arrive.
    const orders: OrderRecord[] = [];
    for (let i = 0; i < 4; i++) orders.push(await admin.createOrder(location.id, sampleRows));
    const report = (number: number) => call('POST', `${origin(nodeB)}/api/v1/orders/${number}/failure`, { apiKey: key });
    // order 4 reaches the threshold (2) and waits for an operator
    expect((await report(4)).status).toBe(200);
    expect((await report(4)).json<OrderRecord>().state).toBe('FAILED');

    // A register that already had everything reconnects to node A: nothing to replay.
    const stream = await TestStream.open(`${origin(nodeA)}${streamPath}`, { apiKey: key, headers: { 'Last-Event-ID': '4.0' } });
    try {
      expect(stream.status).toBe(200);
      await stream.waitFor(() => stream.raw.startsWith('retry:'), 'the preamble');

      await proxy.cut();
      const completed = await call('PUT', `${origin(nodeB)}/api/v1/orders/1/statusupdate`, { apiKey: key, body: { newState: 'COMPLETED' } });
      const refailed = await report(2); // below the threshold: back in PLACED, announced again
      const recovered = await call('POST', `${origin(nodeB)}/admin/v1/locations/${location.id}/orders/4/recover`, {
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
      });
      const fifth = await admin.createOrder(location.id, sampleRows);
      const command = await admin.createCommand(location.id, 'REQUEST_BILL');
      for (const answer of [completed, refailed, recovered]) expect(answer.status).toBe(200);
      expect(refailed.json<OrderRecord>()).toMatchObject({ state: 'PLACED', failedTime: expect.any(String) });
      expect(stream.events).toEqual([]);
      await proxy.restore();

      await stream.eventCount(5, 15_000);
      // A second outage with nothing written meanwhile sends nothing.
      await proxy.cut();
      await pause(300);
      await proxy.restore();
      await pause(3_000);
      const marker = await admin.createOrder(location.id, sampleRows);
      await stream.eventCount(6, 10_000);
      expect(stream.events.map((e) => [e.event, e.id, e.json()])).toEqual([
        ['order', '4.0', completed.json()],
        ['order', '4.0', refailed.json()],
        ['order', '4.0', recovered.json()],
        ['order', '5.0', fifth],
        ['command', '5.1', command],
        ['order', '6.1', marker],
      ]);
      expect(orders[2]!.number).toBe(3); // order 3 never changed, and never came
      expect(nodeA.output()).toContain('stream re-read after redis reconnect');
    } finally {
      stream.close();
    }
  });
});
