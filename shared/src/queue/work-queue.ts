import { Queue } from 'bullmq';
import type Redis from 'ioredis';
import type { Logger } from '../log';
import { DEFAULT_JOB_OPTIONS, WORK_QUEUE } from './jobs';

/**
 * The one queue API nodes add to and workers take from. Connection errors are logged (the
 * connection retries by itself); without a listener BullMQ prints them to the console.
 */
export function createWorkQueue(connection: Redis, prefix: string, log: Logger): Queue {
  const queue = new Queue(WORK_QUEUE, { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
  queue.on('error', (err: Error) => log.warn({ err: err.message }, 'work queue connection error'));
  return queue;
}
