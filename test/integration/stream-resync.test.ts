/**
 * Streams across Redis outages (docs/register-interface.md, part 6: no
 * duplicate between replay and live): once a node
 * has its subscriptions back, each stream sends what it may have missed and nothing else.
 * API nodes and a worker as child processes: a soak on a Redis of this file's own (restarted for
 * real) with API nodes killed under it, and a node alone losing Redis through a proxy.
 */
import { MongoClient } from 'mongodb';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { RegisterClient, WorkStream } from '@pos/shared/clients/register/client';
import { isOrderRecord, OrderDoc, OrderRecord } from '@pos/shared/domain/records';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { startRedisServer } from '../../scripts/embedded/redis-server';
import { adminHeader, call, sampleRows } from '../support/http';
import { metricValue } from '../support/metrics';
import { logged, roleOrigin, stopRoles } from '../support/roles';
import { streamPath, TestStream } from '../support/sse-client';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { TcpProxy } from '../../scripts/embedded/tcp-proxy';
import { eventually, pause } from '../support/wait';

const LOST = 'redis subscriptions lost; restoring them';
const RESYNCED = 'streams re-read after redis reconnect';

/**
 * A register as the reference client runs it (reconnects with its cursor, polls after each
 * reconnect), through a door that the test points at a surviving node. It counts the PLACED
 * order events of each connection, and what its polls listed.
 */
class SoakRegister {
  /** Per connection: PLACED events by order number. */
  private readonly connections: Map<number, number>[] = [];
  private readonly polled = new Set<number>();
  readonly stream: WorkStream;

  constructor(
    door: TcpProxy,
    apiKey: string,
    readonly locationId: string,
  ) {
    const client = new RegisterClient({ baseUrl: `${door.url('http')}/api/v1`, apiKey });
    this.stream = client.openStream({
      onState: (state) => {
        if (state.state === 'open') this.connections.push(new Map());
      },
      onOrder: (order) => {
        if (order.state !== 'PLACED') return;
        const connection = this.connections.at(-1)!;
        connection.set(order.number, (connection.get(order.number) ?? 0) + 1);
      },
      onPoll: (work) => {
        for (const record of work)
          if (isOrderRecord(record) && record.state === 'PLACED') this.polled.add(record.number);
      },
    });
  }

  get connectionCount(): number {
    return this.connections.length;
  }

  /** How often the order came as PLACED, over all this register's streams. */
  streamed(number: number): number {
    return this.connections.reduce((sum, connection) => sum + (connection.get(number) ?? 0), 0);
  }

  seen(number: number): boolean {
    return this.streamed(number) > 0 || this.polled.has(number);
  }

  /** Orders not delivered exactly once: twice on the streams, or neither streamed nor polled. */
  notOnce(numbers: number[]): { number: number; streamed: number; polled: boolean }[] {
    return numbers
      .map((number) => ({ number, streamed: this.streamed(number), polled: this.polled.has(number) }))
      .filter(({ streamed, polled }) => streamed > 1 || (streamed === 0 && !polled));
  }
}

describe('a soak: orders flowing through API node kills and a Redis restart', () => {
  let redisServer: ChildServer;
  let env: StackEnv;
  let nodes: (ChildRole & { port?: number })[];
  let worker: ChildRole;
  let doors: TcpProxy[];

  beforeAll(async () => {
    redisServer = await startRedisServer();
    // A customer's request that Redis dropped answers 503 in 3 s, and is tried again.
    env = stackEnv({ REDIS_URL: redisServer.url, JOB_TIMEOUT: '3s' });
    const roles = await Promise.all([
      spawnRole('api', env),
      spawnRole('api', env),
      spawnRole('api', env),
      spawnRole('worker', env),
    ]);
    nodes = roles.slice(0, 3);
    worker = roles[3]!;
    doors = await Promise.all(nodes.map((node) => TcpProxy.start(roleOrigin(node))));
  });
  afterAll(async () => {
    await stopRoles([...(nodes ?? []), worker], 'kill');
    await Promise.all((doors ?? []).map((door) => door.close()));
    await redisServer?.stop();
  });

  it('every order reaches each register exactly once as PLACED: on its streams, or by the poll after a reconnect', async () => {
    const [nodeA, nodeB, nodeC] = nodes as [
      ChildRole & { port?: number },
      ChildRole & { port?: number },
      ChildRole & { port?: number },
    ];
    const admin = new AdminClient(roleOrigin(nodeC), env.ADMIN_TOKEN!);
    const locations = await Promise.all(['north', 'south'].map((name) => admin.createLocation(`soak-${name}`)));
    // Each location has a register behind each door: nodes A, B and C to begin with.
    const registers: SoakRegister[] = [];
    try {
      for (const location of locations) {
        for (const [i, door] of doors.entries()) {
          const session = await admin.createServiceSession(location.id, `register-${i}`);
          registers.push(new SoakRegister(door, session.apiKey, location.id));
        }
      }
      await eventually(
        () => registers.every((register) => register.connectionCount > 0),
        'every register connected',
        10_000,
      );

      // Orders flow through node C the whole time: counter orders (creating needs only MongoDB,
      // so they go on while Redis is down, and their announcements are what the outage loses), and
      // customer orders, each submitted after a few counter orders took higher numbers (so that
      // its first announcement comes below the registers' cursors).
      let flowing = true;
      let created = 0;
      const counterOrders = async (locationId: string) => {
        while (flowing) {
          await admin.createOrder(locationId, sampleRows).then(
            () => (created += 1),
            () => undefined,
          );
          await pause(40); // the load's pace
        }
      };
      const untilDone = async (step: () => Promise<{ status: number }>) => {
        while (flowing && (await step().catch(() => ({ status: 0 }))).status !== 200) await pause(100); // a client's retry delay
      };
      const customerOrders = async (locationId: string) => {
        const session = await admin.createCustomerSession(locationId, 7);
        const url = `${roleOrigin(nodeC)}/api/v1/customer/orders`;
        while (flowing) {
          const opened = await call('POST', url, { apiKey: session.apiKey, body: { rows: sampleRows } }).catch(
            () => undefined,
          );
          if (opened?.status !== 201) {
            await pause(100); // a client's retry delay
            continue;
          }
          const number = opened.json<OrderRecord>().number;
          const after = created + 3;
          await eventually(() => !flowing || created >= after, 'three more counter orders', 60_000);
          await untilDone(() => call('POST', `${url}/${number}/finish`, { apiKey: session.apiKey }));
          await untilDone(() => call('POST', `${url}/${number}/submit`, { apiKey: session.apiKey }));
        }
      };
      const flows = Promise.all(
        locations.flatMap((location) => [counterOrders(location.id), customerOrders(location.id)]),
      );
      const progress = async (more: number) => {
        const target = created + more;
        await eventually(() => created >= target, `${more} more orders`, 30_000);
      };

      try {
        await progress(30);
        await nodeA.kill(); // its registers reconnect through their door to node B
        doors[0]!.retarget(roleOrigin(nodeB));
        // Orders flow for 6 s more, so that every stream has orders announced 2 to 5 s before the
        // loss (written within the 5 s margin that the re-read covers).
        await Promise.all([progress(30), pause(6_000)]);

        const port = Number(new URL(redisServer.url).port);
        await redisServer.stop();
        // Down for 4 s while orders go on (fewer: each waits for its announcement to fail): longer
        // than the 2 s after which a stream's memory of what it sent before the loss used to lapse.
        await pause(4_000);
        redisServer = await startRedisServer(port);
        await eventually(
          () => logged(nodeB, RESYNCED) >= 1 && logged(nodeC, RESYNCED) >= 1,
          'nodes B and C to re-read their streams',
          20_000,
        );
        await progress(30);

        await nodeB.kill(); // its registers reconnect to node C
        doors[0]!.retarget(roleOrigin(nodeC));
        doors[1]!.retarget(roleOrigin(nodeC));
        await progress(30);
      } finally {
        flowing = false;
        await flows;
      }
      const markers = await Promise.all(locations.map((location) => admin.createOrder(location.id, sampleRows)));

      const client = await new MongoClient(env.MONGO_URL!).connect();
      try {
        // Every order that became PLACED still is: nothing completes them.
        const orders = client.db(env.MONGO_DB).collection<OrderDoc>('orders');
        const placed = new Map<string, number[]>();
        for (const location of locations) {
          placed.set(
            location.id,
            (await orders.find({ locationId: location.id, state: 'PLACED' }).toArray()).map((order) => order.number),
          );
        }
        expect([...placed.values()].flat().length).toBeGreaterThan(100);
        for (const [i, location] of locations.entries()) expect(placed.get(location.id)).toContain(markers[i]!.number);
        await eventually(
          () =>
            registers.every((register) => placed.get(register.locationId)!.every((number) => register.seen(number))),
          'every register to have every order',
          20_000,
        );
        for (const register of registers) expect(register.notOnce(placed.get(register.locationId)!)).toEqual([]);
      } finally {
        await client.close();
      }
    } finally {
      await Promise.all(registers.map((register) => register.stream.close()));
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
    await stopRoles([nodeA, nodeB, worker], 'kill');
    await proxy?.close();
  });

  /** Cuts node A off Redis, and waits until it has seen its subscriptions lost. */
  async function cut(): Promise<void> {
    const before = logged(nodeA, LOST);
    await proxy.cut();
    await eventually(() => logged(nodeA, LOST) > before, 'node A to see Redis lost', 10_000);
  }

  /** Gives node A its Redis back, and waits until its streams are re-read. */
  async function restore(): Promise<void> {
    const resyncs = () => metricValue(roleOrigin(nodeA), 'pos_stream_resyncs_total');
    const before = await resyncs();
    await proxy.restore();
    await eventually(async () => (await resyncs()) > before, 'node A to re-read its streams', 20_000);
  }

  it('re-announcements and state changes below the cursor made meanwhile arrive once; what did not change, never', async () => {
    const admin = new AdminClient(roleOrigin(nodeB), env.ADMIN_TOKEN!);
    const location = await admin.createLocation('lost-subscription', 2);
    const session = await admin.createServiceSession(location.id, 'register');
    const key = session.apiKey;
    // One at a time: concurrent creates take their numbers in whatever order they arrive.
    const orders: OrderRecord[] = [];
    for (let i = 0; i < 4; i++) orders.push(await admin.createOrder(location.id, sampleRows));
    const report = (number: number) =>
      call('POST', `${roleOrigin(nodeB)}/api/v1/orders/${number}/failure`, { apiKey: key });
    // order 4 reaches the threshold (2) and waits for an operator
    expect((await report(4)).status).toBe(200);
    expect((await report(4)).json<OrderRecord>().state).toBe('FAILED');

    // A register that already had everything reconnects to node A: nothing to replay.
    const stream = await TestStream.open(`${roleOrigin(nodeA)}${streamPath}`, {
      apiKey: key,
      headers: { 'Last-Event-ID': '4.0' },
    });
    try {
      expect(stream.status).toBe(200);
      await stream.preamble();

      await cut();
      const completed = await call('PUT', `${roleOrigin(nodeB)}/api/v1/orders/1/statusupdate`, {
        apiKey: key,
        body: { newState: 'COMPLETED' },
      });
      const refailed = await report(2); // below the threshold: back in PLACED, announced again
      const recovered = await call('POST', `${roleOrigin(nodeB)}/admin/v1/locations/${location.id}/orders/4/recover`, {
        headers: adminHeader(env),
      });
      const fifth = await admin.createOrder(location.id, sampleRows);
      const command = await admin.createCommand(location.id, 'REQUEST_BILL');
      for (const answer of [completed, refailed, recovered]) expect(answer.status).toBe(200);
      expect(refailed.json<OrderRecord>()).toMatchObject({ state: 'PLACED', failedTime: expect.any(String) });
      expect(stream.events).toEqual([]);
      await restore();

      await stream.eventCount(5, 15_000);
      // A second outage with nothing written meanwhile sends nothing: once it is re-read, the
      // next event is the marker.
      await cut();
      await restore();
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
      expect(logged(nodeA, RESYNCED)).toBeGreaterThanOrEqual(2);
    } finally {
      stream.close();
    }
  });

  it('never sends again what it announced before the loss; a late submit, a re-announcement and a state change made meanwhile come once', async () => {
    const admin = new AdminClient(roleOrigin(nodeB), env.ADMIN_TOKEN!);
    const location = await admin.createLocation('announced-before-loss', 3);
    const key = (await admin.createServiceSession(location.id, 'register')).apiKey;
    const customer = await admin.createCustomerSession(location.id, 12);
    const carts = `${roleOrigin(nodeB)}/api/v1/customer/orders`;
    // A customer's order takes number 1 and waits in NEW while counter orders 2 to 4 are announced.
    const cart = await call('POST', carts, { apiKey: customer.apiKey, body: { rows: sampleRows } });
    expect(cart.json<OrderRecord>().number).toBe(1);
    expect((await call('POST', `${carts}/1/finish`, { apiKey: customer.apiKey })).status).toBe(200);

    const stream = await TestStream.open(`${roleOrigin(nodeA)}${streamPath}`, { apiKey: key });
    try {
      const announced: OrderRecord[] = [];
      for (let i = 0; i < 3; i++) announced.push(await admin.createOrder(location.id, sampleRows));
      await stream.eventCount(3);
      const announcedAt = Date.now();

      await cut();
      const submitted = await call('POST', `${carts}/1/submit`, { apiKey: customer.apiKey }); // a first announcement, below the cursor
      const refailed = await call('POST', `${roleOrigin(nodeB)}/api/v1/orders/3/failure`, { apiKey: key });
      const completed = await call('PUT', `${roleOrigin(nodeB)}/api/v1/orders/4/statusupdate`, {
        apiKey: key,
        body: { newState: 'COMPLETED' },
      });
      const fifth = await admin.createOrder(location.id, sampleRows);
      for (const answer of [submitted, refailed, completed]) expect(answer.status).toBe(200);
      expect(refailed.json<OrderRecord>()).toMatchObject({ state: 'PLACED', failedTime: expect.any(String) });
      // The outage lasts until 7.5 s after the announcements: longer than a stream used to
      // remember them (7 s from sending), though they were written within the 5 s margin.
      await pause(Math.max(0, announcedAt + 7_500 - Date.now()));
      expect(stream.events).toHaveLength(3);
      await restore();

      const marker = await admin.createOrder(location.id, sampleRows);
      await stream.eventCount(8, 10_000);
      const list = (await call('GET', `${roleOrigin(nodeB)}/api/v1/orders/location`, { apiKey: key })).json<
        OrderRecord[]
      >();
      expect(stream.events.map((e) => [e.id, e.json()])).toEqual([
        ['2.0', announced[0]],
        ['3.0', announced[1]],
        ['4.0', announced[2]],
        ['4.0', list.find((order) => order.number === 1)],
        ['4.0', refailed.json()],
        ['4.0', completed.json()],
        ['5.0', fifth],
        ['6.0', marker],
      ]);
    } finally {
      stream.close();
    }
  });
});
