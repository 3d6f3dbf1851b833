/**
 * The order deadline queue's contract (docs/presence-and-deadlines.md): delayed jobs, one per
 * placement and kind, that mark a PLACED order overdue (ORDER_DEADLINE, or the location's
 * `orderDeadline`) or abort it (ORDER_AUTO_ABORT_AFTER). A queue of its own, hash-tagged on a
 * Redis Cluster like the lifecycle queue's.
 */
import type { Queue } from 'bullmq';
import type { OrderDeadlinesConfig, RedisConfig } from '../config';
import { parseDuration } from '../config';
import type { Logger } from '../log';
import type { RedisClient } from '../redis';
import type { OrderDoc } from '../store/documents';
import { queuePrefix } from './prefix';
import { serviceQueue } from './telemetry';

export const ORDER_DEADLINE_QUEUE = 'order-deadlines';
export const ORDER_DEADLINE_JOB = { overdue: 'order-overdue', autoAbort: 'order-auto-abort' } as const;
export type OrderDeadlineJobName = (typeof ORDER_DEADLINE_JOB)[keyof typeof ORDER_DEADLINE_JOB];

/** One placement of one order: `orderTime` (epoch ms) tells placements apart, a recovery sets a new one. */
export interface OrderDeadlineJob {
  locationId: string;
  orderNumber: number;
  orderTime: number;
}

/**
 * The deployment's count of orders marked overdue (each once), which every API node's /metrics
 * reports. Hash-tagged so that each marking job's counted-key (below) shares its Cluster slot.
 */
export const overdueCountKey = (prefix: string): string => `${prefix}:{deadlines:overdue}`;

/** How long a marking job's counted-key outlives its count: far longer than the job's re-runs take. */
const COUNTED_TTL_MS = 24 * 60 * 60 * 1000;
const COUNT_ONCE_SCRIPT = `if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then return redis.call('INCR', KEYS[1]) end return 0`;

/** Counts the placement `jobId` marked overdue, once however often that job runs (one atomic script). */
export async function countOverdueOnce(redis: RedisClient, prefix: string, jobId: string): Promise<void> {
  const key = overdueCountKey(prefix);
  await redis.eval(COUNT_ONCE_SCRIPT, 2, key, `${key}:counted:${jobId}`, COUNTED_TTL_MS);
}

export const orderDeadlinePrefix = (redis: Pick<RedisConfig, 'prefix' | 'cluster'>): string =>
  queuePrefix(redis, 'deadlines');

export function createOrderDeadlineQueue(
  connection: RedisClient,
  redis: Pick<RedisConfig, 'prefix' | 'cluster'>,
  log: Logger,
): Queue<OrderDeadlineJob> {
  return serviceQueue<OrderDeadlineJob>(
    ORDER_DEADLINE_QUEUE,
    { connection, prefix: orderDeadlinePrefix(redis) },
    'order deadline',
    log,
  );
}

/**
 * The job id of a placement's deadline: adding it again (a job re-run, a failure report that
 * leaves the order PLACED) adds nothing while the first is kept. (BullMQ ids may not hold `:`.)
 */
export const orderDeadlineJobId = (name: OrderDeadlineJobName, job: OrderDeadlineJob): string =>
  `${name}-${job.locationId}-${job.orderNumber}-${job.orderTime}`;

/**
 * Finished deadline jobs kept for Bull Board, bounded (Redis runs `noeviction`). A repeated add
 * comes while the job still waits, as a rule; one after it ran and was removed adds a job whose
 * guarded write then changes nothing.
 */
const KEEP = { age: 3600, count: 1000 };

/**
 * The deadline in ms for a location: its own `orderDeadline` (`0`: none), else ORDER_DEADLINE.
 */
export function overdueAfterMs(
  deadlines: Pick<OrderDeadlinesConfig, 'orderDeadlineMs'>,
  locationDeadline: string | undefined,
): number | undefined {
  const ms = locationDeadline === undefined ? deadlines.orderDeadlineMs : parseDuration(locationDeadline);
  return ms === undefined || ms <= 0 ? undefined : ms;
}

/**
 * Adds the deadline jobs of a placement (an order just PLACED): overdue and auto-abort, each
 * when it is set, delayed to `orderTime` plus its duration. Safe to repeat (fixed job ids).
 * `locationDeadline` is read only when it matters; undefined when neither is set.
 */
export async function addOrderDeadlines(
  queue: Queue<OrderDeadlineJob>,
  deadlines: Pick<OrderDeadlinesConfig, 'orderDeadlineMs' | 'autoAbortAfterMs'>,
  order: Pick<OrderDoc, 'locationId' | 'number' | 'orderTime'>,
  locationDeadline: () => Promise<string | undefined>,
  now = Date.now(),
): Promise<void> {
  if (!order.orderTime) return;
  const job: OrderDeadlineJob = {
    locationId: order.locationId,
    orderNumber: order.number,
    orderTime: order.orderTime.getTime(),
  };
  const overdueMs = overdueAfterMs(deadlines, await locationDeadline());
  const adds: [OrderDeadlineJobName, number][] = [];
  if (overdueMs !== undefined) adds.push([ORDER_DEADLINE_JOB.overdue, overdueMs]);
  if (deadlines.autoAbortAfterMs !== undefined) adds.push([ORDER_DEADLINE_JOB.autoAbort, deadlines.autoAbortAfterMs]);
  await Promise.all(
    adds.map(([name, after]) =>
      queue.add(name, job, {
        jobId: orderDeadlineJobId(name, job),
        delay: Math.max(0, job.orderTime + after - now),
        attempts: 5,
        backoff: { type: 'exponential', delay: 500 },
        removeOnComplete: KEEP,
        removeOnFail: KEEP,
      }),
    ),
  );
}
