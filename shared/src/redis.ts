/// <reference path="./types/cluster-key-slot.d.ts" />
import calculateSlot from 'cluster-key-slot';
import Redis, { Cluster, ClusterOptions, RedisOptions } from 'ioredis';
import type { RedisConfig } from './config';
import { ConfigError } from './config';
import type { Logger } from './log';
import { withTimeout } from './util/timeout';

/** One Redis server, or a Redis Cluster through its seed nodes. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: `url` is one URL, or comma-separated seed URLs when `cluster` is set. */
export interface RedisTarget {
  url: string;
  cluster: boolean;
}

export function redisTarget(redis: Pick<RedisConfig, 'url' | 'cluster'>): RedisTarget {
  if (!redis.url) throw new ConfigError('REDIS_URL must be set (or use npm start for the embedded default)');
  return { url: redis.url, cluster: redis.cluster };
}

export const isCluster = (redis: RedisClient): redis is Cluster => (redis as Cluster).isCluster === true;

/** The hash slot of a key or channel (its `{tag}` when it has one). */
export const slotOf = (key: string): number => calculateSlot(key);

/** A node's key as CLUSTER SLOTS and ioredis name it. */
export const nodeKey = (host: string, port: number): string => `${host}:${port}`;

/**
 * What every connection to a node of the target takes from the (first) URL: credentials and
 * TLS. On a cluster, the nodes are reached at the addresses CLUSTER SLOTS announces.
 */
export function nodeOptions(target: RedisTarget): RedisOptions {
  const seed = new URL(seedUrls(target)[0]!);
  const options: RedisOptions = {};
  if (seed.username) options.username = decodeURIComponent(seed.username);
  if (seed.password) options.password = decodeURIComponent(seed.password);
  if (seed.protocol === 'rediss:') options.tls = {};
  return options;
}

function seedUrls(target: RedisTarget): string[] {
  const urls = target.cluster
    ? target.url
        .split(',')
        .map((url) => url.trim())
        .filter(Boolean)
    : [target.url];
  if (urls.length === 0) throw new Error('REDIS_URL names no node');
  return urls;
}

/**
 * A Redis connection, or a Cluster client on `REDIS_CLUSTER=1`; `options` apply to every node
 * connection, `clusterOptions` to the Cluster client. BullMQ's blocking
 * connections need `maxRetriesPerRequest: null`; request-path
 * connections keep a bound so that a Redis outage surfaces as an error (503). With a logger,
 * connection errors (ioredis reconnects on its own) are logged, not printed raw.
 */
export function createRedis(
  target: RedisTarget,
  options: RedisOptions = {},
  log?: Logger,
  clusterOptions: ClusterOptions = {},
): RedisClient {
  let redis: RedisClient;
  if (target.cluster) {
    const nodes = seedUrls(target).map((url) => {
      const { hostname, port } = new URL(url);
      return { host: hostname, port: Number(port || 6379) };
    });
    redis = new Cluster(nodes, { ...clusterOptions, redisOptions: { ...nodeOptions(target), ...options } });
  } else {
    redis = new Redis(target.url, { enableReadyCheck: true, ...options });
  }
  if (log) redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis connection error'));
  return redis;
}

const PUBLISH_TIMEOUT_MS = 2_000;

/**
 * PUBLISH on one Redis; SPUBLISH on a cluster, so that only the channel's shard carries it.
 * Bounded: a cluster client that lost every node queues commands until it is back.
 */
export async function publish(redis: RedisClient, channel: string, message: string): Promise<void> {
  await withTimeout(
    isCluster(redis) ? redis.spublish(channel, message) : redis.publish(channel, message),
    PUBLISH_TIMEOUT_MS,
    'Redis PUBLISH',
  );
}

/**
 * Reads the cluster's slot map again (the client's own, by which it routes commands). ioredis
 * keeps `refreshSlotsCache` out of its documentation but types it; it is what MOVED replies and
 * lost connections call.
 */
export function refreshSlots(cluster: Cluster, ms: number): Promise<void> {
  return withTimeout(
    new Promise<void>((resolve, reject) => cluster.refreshSlotsCache((err) => (err ? reject(err) : resolve()))),
    ms,
    'the cluster slot map',
  );
}

/**
 * Resolves when Redis answers: the server, or on a cluster every master that serves slots in the
 * client's map. A master that died fails it until its replica has taken over and the map says so:
 * a failed probe has the map read again, for the next probe.
 */
export async function pingRedis(redis: RedisClient, ms: number): Promise<void> {
  if (!isCluster(redis)) {
    await withTimeout(redis.ping(), ms, 'Redis PING');
    return;
  }
  try {
    await pingMasters(redis, ms);
  } catch (err) {
    redis.refreshSlotsCache();
    throw err;
  }
}

async function pingMasters(redis: Cluster, ms: number): Promise<void> {
  const masters = new Set<string>();
  for (let slot = 0; slot < 16384; slot++) {
    const owner = redis.slots[slot]?.[0];
    if (!owner) throw new Error(`no master serves slot ${slot}`);
    masters.add(owner);
  }
  const connections = new Map(
    redis.nodes('master').map((node) => [nodeKey(String(node.options.host), Number(node.options.port)), node]),
  );
  await Promise.all(
    [...masters].map((key) => {
      const node = connections.get(key);
      if (!node) throw new Error(`no connection to master ${key}`);
      return withTimeout(node.ping(), ms, `Redis PING ${key}`);
    }),
  );
}

/** Resolves when the connection is up (at once if it is); rejects if it ends, or after `ms`. */
export function whenReady(connection: RedisClient, ms?: number): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      connection.off('ready', onReady);
      connection.off('end', onEnd);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => settle();
    const onEnd = () => settle(new Error('the Redis connection was closed'));
    const timer =
      ms === undefined ? undefined : setTimeout(() => settle(new Error(`Redis did not connect in ${ms} ms`)), ms);
    connection.on('ready', onReady);
    connection.on('end', onEnd);
  });
}

/** QUIT when the connection is up (bounded), else drop it: QUIT would wait for a reconnect. */
export async function closeRedis(redis: RedisClient, ms = 1_000): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  try {
    await withTimeout(redis.quit(), ms, 'Redis QUIT');
  } catch {
    redis.disconnect();
  }
}
