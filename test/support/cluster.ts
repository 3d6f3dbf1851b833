/**
 * The cluster tests' view of a Redis Cluster: the environment of a deployment on it, and direct
 * questions to its nodes (who serves a slot, what each node holds).
 */
import Redis from 'ioredis';
import type { StackEnv } from './stack';

/** Overrides that put a stack on the cluster (the run's own, unless `url` names another). */
export function onCluster(overrides: StackEnv = {}, url = process.env.TEST_REDIS_CLUSTER_URL!): StackEnv {
  return { REDIS_URL: url, REDIS_CLUSTER: '1', ...overrides };
}

export const portsOf = (url: string): number[] => url.split(',').map((seed) => Number(new URL(seed).port));

/** One command to one node; its connection is closed afterwards. */
export async function onNode<T = unknown>(port: number, ...args: [string, ...(string | number)[]]): Promise<T> {
  const redis = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.call(...args)) as T;
  } finally {
    redis.disconnect();
  }
}

type SlotRange = [number, number, [string, number, ...unknown[]], ...unknown[]];

/** The master ports of the cluster, each with the slot ranges it serves (asked of the first node that answers). */
export async function masters(url: string): Promise<Map<number, Array<[number, number]>>> {
  for (const port of portsOf(url)) {
    let ranges: SlotRange[];
    try {
      ranges = await onNode<SlotRange[]>(port, 'CLUSTER', 'SLOTS');
    } catch {
      continue;
    }
    const byMaster = new Map<number, Array<[number, number]>>();
    for (const [from, to, [, masterPort]] of ranges)
      byMaster.set(masterPort, [...(byMaster.get(masterPort) ?? []), [from, to]]);
    return byMaster;
  }
  throw new Error('no cluster node answers');
}

export async function masterOf(url: string, slot: number): Promise<number> {
  for (const [port, ranges] of await masters(url))
    if (ranges.some(([from, to]) => slot >= from && slot <= to)) return port;
  throw new Error(`no master serves slot ${slot}`);
}
