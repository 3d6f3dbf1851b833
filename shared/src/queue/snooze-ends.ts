/**
 * The snooze-end queue's contract (docs/menu.md): one delayed job per timed snooze, due at its
 * `until`, that records the product's return (`menu.item_availability_changed`) within seconds of
 * it. Reads never wait for it: a snooze whose `until` has come has ended, written or not. A queue
 * of its own (hash-tagged on a Redis Cluster), so a worker of a release without menus takes none.
 */
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { RedisConfig } from '../config';
import type { Logger } from '../log';
import type { RedisClient } from '../redis';
import { queuePrefix } from './prefix';
import { serviceQueue } from './telemetry';

export const SNOOZE_END_QUEUE = 'snooze-ends';
export const SNOOZE_END_JOB = 'snooze-end';

export interface SnoozeEndJob {
  locationId: string;
  productId: string;
  /** The snooze's `until`, epoch ms: a snooze changed since has another, and its own job. */
  until: number;
}

export const snoozeEndPrefix = (redis: Pick<RedisConfig, 'prefix' | 'cluster'>): string =>
  queuePrefix(redis, 'snoozes');

export function createSnoozeEndQueue(
  connection: RedisClient,
  redis: Pick<RedisConfig, 'prefix' | 'cluster'>,
  log: Logger,
): Queue<SnoozeEndJob> {
  return serviceQueue<SnoozeEndJob>(
    SNOOZE_END_QUEUE,
    { connection, prefix: snoozeEndPrefix(redis) },
    'snooze end',
    log,
  );
}

/**
 * Adding one snooze's end again adds nothing while the first is kept
 * (product ids are hashed: BullMQ ids may not hold `:`).
 */
export const snoozeEndJobId = (job: SnoozeEndJob): string =>
  `${SNOOZE_END_JOB}-${job.locationId}-${createHash('sha256').update(job.productId).digest('base64url').slice(0, 16)}-${job.until}`;

/** Finished jobs kept for Bull Board, bounded (Redis runs `noeviction`). */
const KEEP = { age: 3600, count: 1000 };

export async function addSnoozeEnd(queue: Queue<SnoozeEndJob>, job: SnoozeEndJob, now = Date.now()): Promise<void> {
  await queue.add(SNOOZE_END_JOB, job, {
    jobId: snoozeEndJobId(job),
    delay: Math.max(0, job.until - now),
    attempts: 5,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: KEEP,
    removeOnFail: KEEP,
  });
}
