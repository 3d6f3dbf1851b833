import { Queue } from 'bullmq';
import type Redis from 'ioredis';
import { DEFAULT_JOB_OPTIONS, WORK_QUEUE } from './jobs';

/** The one queue API nodes add to and workers take from. */
export function createWorkQueue(connection: Redis, prefix: string): Queue {
  return new Queue(WORK_QUEUE, { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
}
