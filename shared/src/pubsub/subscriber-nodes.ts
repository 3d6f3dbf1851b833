import Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { createRedis, nodeOptions, RedisTarget, refreshSlots, slotOf, whenReady } from '../redis';
import { doubling } from '../util/doubling-pause';

const SLOT_MAP_TIMEOUT_MS = 1_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** A lost subscriber connection tries again after 100 ms, doubling up to this. */
const RECONNECT_CAP_MS = 1_000;

/**
 * Where the subscriptions of a channel live, and how to reach it: the one Redis with classic
 * pub/sub, or on a cluster the master serving the channel's hash slot, with sharded pub/sub.
 */
export interface SubscriberNodes {
  readonly commands: {
    subscribe: 'subscribe' | 'ssubscribe';
    unsubscribe: 'unsubscribe' | 'sunsubscribe';
    message: 'message' | 'smessage';
  };
  /** The node serving the channel now (by the last map read); undefined when none does. */
  nodeOf(channel: string): string | undefined;
  /** Reads the cluster's slot map again; bounded. Nothing to do on one Redis. */
  refresh(): Promise<void>;
  /** A new subscriber connection to the node; it reconnects by itself and never resubscribes. */
  connect(node: string): Redis;
  /** `listener` hears of every new read of a cluster's slot map (periodic, or after errors). */
  watch(listener: () => void): void;
  close(): void;
}

const subscriberOptions = {
  maxRetriesPerRequest: null,
  // The ChannelSubscriber resubscribes itself, so that it knows when Redis has confirmed it.
  autoResubscribe: false,
  retryStrategy: (attempt: number) => doubling(attempt, [100, RECONNECT_CAP_MS]),
};

/** The one node of a single Redis. */
export const SINGLE_REDIS_NODE = 'redis';

/** One Redis: every channel on it, classic SUBSCRIBE. */
export function singleRedisNodes(target: RedisTarget): SubscriberNodes {
  return {
    commands: { subscribe: 'subscribe', unsubscribe: 'unsubscribe', message: 'message' },
    nodeOf: () => SINGLE_REDIS_NODE,
    refresh: async () => undefined,
    connect: () => createRedis(target, subscriberOptions) as Redis,
    watch: () => undefined,
    close: () => undefined,
  };
}

/**
 * A Redis Cluster: a channel lives on the master of its hash slot, SSUBSCRIBE on a connection to
 * that master. The slot map is the node's command client's own (the one its commands are routed
 * by), refreshed on demand and every few seconds by the client itself.
 */
export function clusterNodes(target: RedisTarget, cluster: Cluster): SubscriberNodes {
  let onRefresh: (() => void) | undefined;
  // One refresh at a time, shared by every channel placed meanwhile (a burst of streams opening).
  let refreshing: Promise<void> | undefined;
  return {
    commands: { subscribe: 'ssubscribe', unsubscribe: 'sunsubscribe', message: 'smessage' },
    nodeOf: (channel) => cluster.slots[slotOf(channel)]?.[0],
    // A client still connecting reads the map as it connects (and knows no node to ask before).
    refresh: () =>
      (refreshing ??= (
        cluster.status === 'ready' ? refreshSlots(cluster, SLOT_MAP_TIMEOUT_MS) : whenReady(cluster, CONNECT_TIMEOUT_MS)
      ).finally(() => (refreshing = undefined))),
    connect(node) {
      const colon = node.lastIndexOf(':');
      return new Redis({
        ...nodeOptions(target),
        ...subscriberOptions,
        host: node.slice(0, colon),
        port: Number(node.slice(colon + 1)),
      });
    },
    watch(listener) {
      onRefresh = listener;
      cluster.on('refresh', listener);
    },
    close() {
      if (onRefresh) cluster.off('refresh', onRefresh);
    },
  };
}
