/**
 * ChannelSubscriber on a Redis Cluster: many channels subscribed at once (a burst of streams
 * opening on a node just started) are each placed on their slot's master, and what waits
 * meanwhile (the slot map, each master's connection coming up, each SSUBSCRIBE's MOVED, which
 * ioredis tells as an event, not a rejection) waits on one listener per connection, not one per
 * channel: nothing piles up for Node to warn of as a leak.
 */
import type { EventEmitter } from 'node:events';
import Redis, { Cluster } from 'ioredis';
import { ChannelSubscriber } from '@pos/shared/pubsub/channel-subscriber';
import { clusterNodes } from '@pos/shared/pubsub/subscriber-nodes';
import { createLogger } from '@pos/shared/log';
import { createRedis, slotOf } from '@pos/shared/redis';
import { masterOf, onNode } from '../support/cluster';

const WATCHED = ['moved', 'ready', 'end'];
type On = (this: EventEmitter, event: string | symbol, listener: (...args: unknown[]) => void) => unknown;

describe('ChannelSubscriber on a Redis Cluster', () => {
  const url = () => process.env.TEST_REDIS_CLUSTER_URL!;
  let cluster: Cluster;
  let subscriber: ChannelSubscriber;

  beforeAll(() => {
    cluster = createRedis({ url: url(), cluster: true }) as Cluster;
    subscriber = new ChannelSubscriber(
      clusterNodes({ url: url(), cluster: true }, cluster),
      createLogger('silent', 'test'),
    );
  });
  afterAll(async () => {
    await subscriber.quit();
    cluster.disconnect();
  });

  it('subscribes 60 channels at once, each on its master, with at most a few listeners of an event on any emitter', async () => {
    // the most listeners of each watched event any one emitter held at once
    const peak = new Map<string, number>();
    // (ioredis copies EventEmitter's methods onto its classes: their own `on` is what runs)
    const classes = [Redis.prototype, Cluster.prototype] as unknown as { on: On; addListener: On }[];
    const originals = classes.map((proto) => proto.on);
    classes.forEach((proto, i) => {
      const on = originals[i]!;
      proto.on = proto.addListener = function (event, listener) {
        const result = on.call(this, event, listener);
        if (typeof event === 'string' && WATCHED.includes(event))
          peak.set(event, Math.max(peak.get(event) ?? 0, this.listenerCount(event)));
        return result;
      };
    });
    const channels = Array.from({ length: 60 }, (_, i) => `channel-subscriber-${process.pid}:burst-${i}`);
    const handler = () => undefined;
    try {
      await Promise.all(channels.map((channel) => subscriber.subscribe(channel, handler)));
    } finally {
      classes.forEach((proto, i) => (proto.on = proto.addListener = originals[i]!));
    }
    for (const channel of channels.slice(0, 6)) {
      expect(await onNode(await masterOf(url(), slotOf(channel)), 'PUBSUB', 'SHARDNUMSUB', channel)).toEqual([
        channel,
        1,
      ]);
    }
    // (one per waiter would be 20 on each master's connection)
    expect([...peak].filter(([, most]) => most >= 5)).toEqual([]);
    await Promise.all(channels.map((channel) => subscriber.unsubscribe(channel, handler)));
  });
});
