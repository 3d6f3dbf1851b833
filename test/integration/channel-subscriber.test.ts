/**
 * ChannelSubscriber, the node's Redis subscriptions, against a real Redis: handlers per channel,
 * the subscription held while a handler is, one given up before it was confirmed never made, and
 * the loss of its connection (killed by Redis) told as `lost`, restored, then `resubscribed`.
 */
import Redis from 'ioredis';
import { ChannelSubscriber, HEARTBEAT_MS } from '@pos/shared/pubsub/channel-subscriber';
import { singleRedisNodes } from '@pos/shared/pubsub/subscriber-nodes';
import { createLogger } from '@pos/shared/log';
import { eventually, pause } from '../support/wait';

describe('ChannelSubscriber', () => {
  const channel = (name: string) => `channel-subscriber-${process.pid}:${name}`;
  let redis: Redis;
  let subscriber: ChannelSubscriber;
  const numsub = async (name: string) => Number(((await redis.pubsub('NUMSUB', channel(name))) as [string, number])[1]);

  beforeAll(() => {
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  beforeEach(() => {
    subscriber = new ChannelSubscriber(
      singleRedisNodes({ url: process.env.TEST_REDIS_URL!, cluster: false }),
      createLogger('silent', 'test'),
    );
  });
  afterEach(() => subscriber.quit());
  afterAll(() => redis.disconnect());

  it('hands each message to every handler of its channel (a failing one stops no other), and holds the subscription while a handler does', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const failing = () => {
      throw new Error('handler failed');
    };
    const one = (message: string) => first.push(message);
    const two = (message: string) => second.push(message);
    await subscriber.subscribe(channel('a'), failing);
    await subscriber.subscribe(channel('a'), one);
    await subscriber.subscribe(channel('a'), two);
    expect(await numsub('a')).toBe(1);
    await redis.publish(channel('a'), 'hello');
    await redis.publish(channel('b'), 'not for it');
    await eventually(() => first.length === 1 && second.length === 1, 'the message to both handlers');

    await subscriber.unsubscribe(channel('a'), one);
    await subscriber.unsubscribe(channel('a'), failing);
    expect(await numsub('a')).toBe(1);
    expect(subscriber.channelCount).toBe(1);
    await subscriber.unsubscribe(channel('a'), two);
    expect(await numsub('a')).toBe(0);
    expect(subscriber.channelCount).toBe(0);
    expect(subscriber.redis).toBeUndefined(); // its connection closed with its last channel
    await redis.publish(channel('a'), 'after');
    await pause(100);
    expect(first).toEqual(['hello']);
  });

  it('never makes a subscription given up before Redis confirmed it', async () => {
    await subscriber.subscribe(channel('kept'), () => undefined); // a connection in place
    const handler = () => undefined;
    const subscribing = subscriber.subscribe(channel('given-up'), handler);
    await subscriber.unsubscribe(channel('given-up'), handler);
    await subscribing;
    await pause(100);
    expect(await numsub('given-up')).toBe(0);
    expect(subscriber.channelCount).toBe(1);
  });

  it('tells of a lost connection, restores every subscription, then says so with the moment of the loss', async () => {
    const received: string[] = [];
    await subscriber.subscribe(channel('x'), (message) => received.push(message));
    await subscriber.subscribe(channel('y'), (message) => received.push(message));
    subscriber.startHeartbeat();
    const lost: number[] = [];
    const restored: number[] = [];
    subscriber.on('lost', (at: number) => lost.push(at));
    subscriber.on('resubscribed', (at: number) => restored.push(at));
    await eventually(() => subscriber.confirmedWithin(HEARTBEAT_MS * 2), 'a heartbeat answered');

    const port = subscriber.redis!.stream.localPort;
    await redis.client('KILL', 'ADDR', `127.0.0.1:${port}`);
    await eventually(() => lost.length === 1, 'the loss told');
    expect(subscriber.confirmedWithin(60_000)).toBe(false);
    await eventually(() => restored.length === 1, 'the subscriptions restored', 10_000);
    expect(restored[0]).toBe(lost[0]);
    expect(subscriber.isUp).toBe(true);
    expect(await numsub('x')).toBe(1);
    expect(await numsub('y')).toBe(1);
    await redis.publish(channel('y'), 'after');
    await eventually(() => received.includes('after'), 'a message after the restore');
  });
});
