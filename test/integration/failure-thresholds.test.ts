/**
 * A worker's failure thresholds (transitions/failure-thresholds.ts), on a real Redis and MongoDB:
 * read once, then kept; read again after a location's change is published, and whenever the
 * worker's subscriber is not known current.
 */
import { MongoClient } from 'mongodb';
import { Counter, Registry } from 'prom-client';
import { Announcer, redisPublisher } from '@pos/shared/events/announcements';
import { createLogger } from '@pos/shared/log';
import { ChannelSubscriber } from '@pos/shared/pubsub/channel-subscriber';
import { singleRedisNodes } from '@pos/shared/pubsub/subscriber-nodes';
import { createRedis, type RedisClient } from '@pos/shared/redis';
import { createRepos, type Repos } from '@pos/shared/store/repos';
import { FailureThresholds } from '@pos/worker/transitions/failure-thresholds';
import { eventually } from '../support/wait';

describe('FailureThresholds', () => {
  const prefix = `thresholds-${process.pid}`;
  const log = createLogger('silent', 'test');
  let mongo: MongoClient;
  let repos: Repos;
  let redis: RedisClient;
  let subscriber: ChannelSubscriber;
  let counter: Counter<'from'>;
  let thresholds: FailureThresholds;
  const from = async () => {
    const values = (await counter.get()).values;
    const of = (where: string) => values.find(({ labels }) => labels.from === where)?.value ?? 0;
    return { mongodb: of('mongodb'), cache: of('cache') };
  };

  beforeAll(async () => {
    mongo = await MongoClient.connect(process.env.TEST_MONGO_URL!);
    repos = createRepos(mongo.db(prefix));
    redis = createRedis({ url: process.env.TEST_REDIS_URL!, cluster: false });
  });
  beforeEach(async () => {
    subscriber = new ChannelSubscriber(singleRedisNodes({ url: process.env.TEST_REDIS_URL!, cluster: false }), log);
    subscriber.startHeartbeat();
    counter = new Counter({ name: 'thresholds', help: 'test', labelNames: ['from'], registers: [new Registry()] });
    thresholds = new FailureThresholds(repos.locations, subscriber, prefix, 3, counter);
    thresholds.start(log);
    await eventually(
      async () => Number(((await redis.pubsub('NUMSUB', `${prefix}:locations`)) as [string, number])[1]) === 1,
      'the subscription',
    );
  });
  afterEach(async () => {
    await thresholds.stop();
    await subscriber.quit();
  });
  afterAll(async () => {
    await mongo.db(prefix).collection('locations').deleteMany({});
    await mongo.close();
    redis.disconnect();
  });

  it('reads a threshold once and keeps it, until its location is said to have changed', async () => {
    const location = await repos.locations.create('Kept', 5, new Date());
    expect(await thresholds.of(location._id)).toBe(5);
    await repos.locations.update(location._id, { failureThreshold: 7 });
    expect(await thresholds.of(location._id)).toBe(5); // nothing said it changed: the kept one
    expect(await from()).toEqual({ mongodb: 1, cache: 1 });

    await new Announcer(redisPublisher(redis), prefix).locationChanged(location._id);
    await eventually(async () => (await thresholds.of(location._id)) === 7, 'the new threshold');
    expect(await thresholds.of(location._id)).toBe(7);
    expect((await from()).cache).toBeGreaterThanOrEqual(2);
  });

  it('keeps nothing while its subscriber has lost its connection', async () => {
    const location = await repos.locations.create('Lost', 4, new Date());
    expect(await thresholds.of(location._id)).toBe(4);
    await subscriber.quit();
    await repos.locations.update(location._id, { failureThreshold: 9 });
    expect(await thresholds.of(location._id)).toBe(9);
    expect(await thresholds.of(location._id)).toBe(9);
    expect(await from()).toEqual({ mongodb: 3, cache: 0 });
  });

  it('answers the default for a location without a threshold of its own', async () => {
    const { insertedId } = await mongo
      .db(prefix)
      .collection<{ _id: string; name: string }>('locations')
      .insertOne({ _id: `bare-${process.pid}`, name: 'Bare' });
    expect(await thresholds.of(insertedId)).toBe(3);
    expect(await thresholds.of(insertedId)).toBe(3);
    expect(await from()).toEqual({ mongodb: 1, cache: 1 });
  });
});
