/**
 * The transition queue's partitions: `QUEUE_PARTITIONS` BullMQ queues named `order-work`, each under
 * a key prefix of its own. On a Redis Cluster every key of a BullMQ queue must hash to one slot,
 * so each prefix carries a hash tag, chosen so that partition i of n lies in the i-th n-th of
 * the slot space: with the slots split evenly over the masters (as `redis-cli --cluster create`
 * and `rebalance` leave them), n partitions spread evenly over n, n/2, n/3 ... masters.
 */
import { createHash } from 'node:crypto';
import { slotOf } from '../redis';

const SLOTS = 16384;

export interface Partition {
  index: number;
  /** The partition count of the layout it belongs to. */
  count: number;
  /** BullMQ's key prefix for the partition's queue. */
  prefix: string;
  /** `p<index>of<count>`, for logs and Bull Board; empty for the single queue on one Redis. */
  label: string;
}

/**
 * The partitions of a layout. One partition on one Redis keeps the plain prefix (the keys of a
 * deployment from before partitions); everything else is tagged, `<prefix>:{p1of3}` (with a
 * `-k` suffix when needed to land in the partition's share of the slots).
 */
export function partitionLayout(redisPrefix: string, count: number, cluster: boolean): Partition[] {
  if (count === 1 && !cluster) return [{ index: 0, count, prefix: redisPrefix, label: '' }];
  return Array.from({ length: count }, (_, index) => {
    const label = `p${index}of${count}`;
    const [low, high] = partitionSlots(index, count);
    for (let k = 0; ; k++) {
      const prefix = `${redisPrefix}:{${label}${k === 0 ? '' : `-${k}`}}`;
      const slot = slotOf(prefix);
      if (slot >= low && slot < high) return { index, count, prefix, label };
    }
  });
}

/**
 * The slots `[low, high)` partition `index` of `count` must hash into: its share of the slot
 * space, rounded as `redis-cli --cluster create` rounds its masters' ranges, so that they line up.
 */
export function partitionSlots(index: number, count: number): [number, number] {
  return [Math.round((index * SLOTS) / count), Math.round(((index + 1) * SLOTS) / count)];
}

/**
 * The partition of a routing key (a location id): a hash, the same on every node and across
 * restarts, so a location's jobs always go to one queue and start in the order they came.
 */
export function partitionOf(key: string, count: number): number {
  if (count === 1) return 0;
  return createHash('sha256').update(key).digest().readUInt32BE(0) % count;
}
