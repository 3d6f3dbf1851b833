import type { RedisConfig } from '../config';

/**
 * A queue's key prefix: the deployment's, and on a Redis Cluster a hash tag of the queue's own,
 * so that all of the queue's keys share one slot (BullMQ's scripts touch several at once).
 */
export function queuePrefix(redis: Pick<RedisConfig, 'prefix' | 'cluster'>, tag: string): string {
  return redis.cluster ? `${redis.prefix}:{${tag}}` : redis.prefix;
}
