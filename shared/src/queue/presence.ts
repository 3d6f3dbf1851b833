/**
 * The presence sweep's queue (docs/presence-and-deadlines.md): one scheduled job that reads which
 * locations are online and ends timed pauses. A queue of its own, hash-tagged on a Redis Cluster.
 */
import type { Queue } from 'bullmq';
import type { RedisConfig } from '../config';
import type { Logger } from '../log';
import type { RedisClient } from '../redis';
import { queuePrefix } from './prefix';
import { serviceQueue } from './telemetry';

export const PRESENCE_QUEUE = 'location-presence';
export const PRESENCE_SWEEP_JOB = 'presence-sweep';
const PRESENCE_SCHEDULER_ID = 'presence-sweep';

export const presencePrefix = (redis: Pick<RedisConfig, 'prefix' | 'cluster'>): string =>
  queuePrefix(redis, 'presence');

export function createPresenceQueue(
  connection: RedisClient,
  redis: Pick<RedisConfig, 'prefix' | 'cluster'>,
  log: Logger,
): Queue {
  return serviceQueue<unknown>(PRESENCE_QUEUE, { connection, prefix: presencePrefix(redis) }, 'presence', log);
}

/** How often the sweep runs, and the API nodes rewrite held streams: a quarter of the window. */
export const presenceRefreshMs = (windowMs: number): number => Math.max(250, Math.floor(windowMs / 4));

/**
 * One sweep at a time across every worker, every quarter window (fixed
 * ids: many workers upserting make one schedule).
 */
export async function schedulePresenceSweep(queue: Queue, windowMs: number): Promise<void> {
  await queue.setGlobalConcurrency(1);
  await queue.upsertJobScheduler(
    PRESENCE_SCHEDULER_ID,
    { every: presenceRefreshMs(windowMs) },
    {
      name: PRESENCE_SWEEP_JOB,
      data: {},
      opts: { attempts: 1, removeOnComplete: { count: 10 }, removeOnFail: { count: 100 } },
    },
  );
}
