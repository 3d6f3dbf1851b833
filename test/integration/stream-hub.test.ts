/**
 * StreamHub, the node's streams by location, on a real Redis (its channels through a real
 * ChannelSubscriber) with real streams over HTTP: fan-out, one subscription per location held
 * while a stream listens, the node's and each holder's limits, the events that end streams, and
 * shutdown.
 */
import Redis from 'ioredis';
import { MongoClient } from 'mongodb';
import { StreamHub } from '@pos/api/stream/hub';
import { ChannelSubscriber } from '@pos/shared/pubsub/channel-subscriber';
import { singleRedisNodes } from '@pos/shared/pubsub/subscriber-nodes';
import { createApiMetrics } from '@pos/api/metrics/api-metrics';
import { ProblemError } from '@pos/shared/domain/problem';
import type { OrderRecord } from '@pos/shared/domain/records';
import { locationChannel } from '@pos/shared/events/announcements';
import { createLogger } from '@pos/shared/log';
import { createRepos, type Repos } from '@pos/shared/store/repos';
import type { SessionDoc } from '@pos/shared/store/documents';
import { startStreamHarness, type StreamHarness } from '../support/stream-harness';
import { eventually } from '../support/wait';

const order = (number: number): OrderRecord => ({
  number,
  state: 'PLACED',
  orderTime: '2026-11-25T10:00:00.000Z',
  guestCount: 1,
  rows: [{ rowNumber: 1, productId: 'p', name: 'Burger', quantity: 1, unitPrice: 100 }],
});

const STREAMS = {
  maxStreams: 4,
  maxOperatorStreams: 2,
  maxStreamsPerSession: 2,
  maxStreamsPerOperator: 2,
  keepaliveMs: 60_000,
  timeoutMs: 600_000,
};

describe('StreamHub', () => {
  const prefix = `hub-${process.pid}`;
  const log = createLogger('silent', 'test');
  let mongo: MongoClient;
  let repos: Repos;
  let redis: Redis;
  let subscriber: ChannelSubscriber;
  let hub: StreamHub;
  let harness: StreamHarness;
  let sessions: SessionDoc[];

  const publish = (locationId: string, event: object) =>
    redis.publish(locationChannel(prefix, locationId), JSON.stringify(event));
  const numsub = async (locationId: string) =>
    Number(((await redis.pubsub('NUMSUB', locationChannel(prefix, locationId))) as [string, number])[1]);
  const join = async (reader: Parameters<StreamHarness['connect']>[0]) => {
    const opened = await harness.connect(reader, { onEnd: hub.remove, onResyncNeeded: hub.requestResync });
    await hub.add(opened.stream);
    opened.stream.attach({ orders: [], commands: [] });
    await opened.client.preamble();
    return opened;
  };
  const register = (session: SessionDoc) => join({ kind: 'register', session, keyHash: session.keyHash });

  beforeAll(async () => {
    mongo = await MongoClient.connect(process.env.TEST_MONGO_URL!);
    repos = createRepos(mongo.db(`hub-${process.pid}`));
    redis = new Redis(process.env.TEST_REDIS_URL!);
    harness = await startStreamHarness(repos, () => hub.clock);
  });
  beforeEach(async () => {
    subscriber = new ChannelSubscriber(singleRedisNodes({ url: process.env.TEST_REDIS_URL!, cluster: false }), log);
    hub = new StreamHub({
      subscriber,
      prefix,
      metrics: createApiMetrics(),
      log,
      repos,
      operators: repos.operators,
      subscribeTimeoutMs: 2_000,
      streams: STREAMS,
    });
    sessions = await Promise.all(
      ['a', 'b', 'c'].map((key) =>
        repos.sessions.create({ type: 'SERVICE', locationId: 'loc-1', keyHash: key }, new Date()),
      ),
    );
  });
  afterEach(async () => {
    await hub.close();
    harness.endAll();
    await subscriber.quit();
  });
  afterAll(async () => {
    await harness.close();
    redis.disconnect();
    await mongo.close();
  });

  it("fans a location's events out to its streams alone, on one subscription held while a stream listens", async () => {
    const [one, two] = [await register(sessions[0]!), await register(sessions[1]!)];
    const elsewhere = await join({ kind: 'operator', locationId: 'loc-2' });
    expect(hub.openStreams).toBe(3);
    expect(hub.locationCount).toBe(2);
    expect(await numsub('loc-1')).toBe(1);

    await publish('loc-1', { type: 'order', record: order(1), version: 1 });
    await one.client.eventCount(1);
    await two.client.eventCount(1);
    expect(elsewhere.client.events).toEqual([]);

    one.stream.end('client-gone');
    expect(await numsub('loc-1')).toBe(1);
    two.stream.end('client-gone');
    await eventually(async () => (await numsub('loc-1')) === 0, 'the location unsubscribed');
    expect(hub.locationCount).toBe(1);
  });

  it("a session's third stream replaces its oldest; the node refuses a stream beyond its limit (429), and operators beyond their share", async () => {
    const first = await register(sessions[0]!);
    await register(sessions[0]!);
    await register(sessions[0]!);
    expect(first.ends).toEqual(['replaced']);
    expect(hub.openStreams).toBe(2);

    await join({ kind: 'operator', locationId: 'loc-1', operatorId: 'op-1' });
    await join({ kind: 'operator', locationId: 'loc-1', operatorId: 'op-2' });
    const third = await harness.connect(
      { kind: 'operator', locationId: 'loc-1', operatorId: 'op-3' },
      { onEnd: hub.remove },
    );
    await expect(hub.add(third.stream)).rejects.toMatchObject({ problem: { status: 429 } });
    third.stream.end('failed');

    const fifth = await harness.connect(
      { kind: 'register', session: sessions[1]!, keyHash: 'b' },
      { onEnd: hub.remove },
    );
    const refused = await hub.add(fifth.stream).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProblemError);
    expect((refused as ProblemError).headers['Retry-After']).toBeDefined();
  });

  it("a session's close on its location's channel ends that session's streams alone; an operator's change ends its own", async () => {
    const closed = await register(sessions[0]!);
    const other = await register(sessions[1]!);
    const operator = await join({ kind: 'operator', locationId: 'loc-1', operatorId: 'op-1' });
    await publish('loc-1', { type: 'session-closed', sessionId: sessions[0]!._id });
    await closed.client.end();
    expect(closed.ends).toEqual(['session-closed']);

    hub.operatorChanged('op-1');
    await operator.client.end();
    expect(operator.ends).toEqual(['operator-changed']);
    expect(other.stream.isEnded).toBe(false);
  });

  it('after its subscriptions are lost and restored, every stream is re-read and sends what it missed', async () => {
    const opened = await register(sessions[0]!);
    const number = (await repos.locations.nextNumber('loc-1', 'orderSeq')) ?? 1;
    // written while the node's subscriber connection is down: its event never arrives
    await subscriber.redis!.disconnect(true);
    await repos.orders.insert({ locationId: 'loc-1', number, state: 'PLACED', rows: order(1).rows }, new Date());
    await eventually(() => subscriber.isUp, 'the subscriptions restored', 10_000);
    const [event] = await opened.client.eventCount(1, 10_000);
    expect(event!.json<OrderRecord>().number).toBe(number);
  });

  it('at shutdown ends every stream and refuses new ones (503)', async () => {
    const opened = await register(sessions[2]!);
    await hub.close();
    expect(opened.ends).toEqual(['shutdown']);
    const late = await harness.connect({ kind: 'operator', locationId: 'loc-1' });
    await expect(hub.add(late.stream)).rejects.toMatchObject({ problem: { status: 503 } });
  });
});
