/**
 * The order lifecycle job's queue contract: its queue, scheduler and job names, the run's
 * result, and where its figures are kept for the API nodes' /metrics. Everything that touches
 * the lifecycle queue goes through this module.
 *
 * The job has a queue of its own (not `order-work`): "one run at a time across all workers" is
 * then BullMQ's global concurrency of 1 on it, a long run never holds a slot of the transition queue,
 * and partitioning the transition queue leaves it alone.
 */
import type { Queue } from 'bullmq';
import type { RedisConfig } from '../config';
import type { Logger } from '../log';
import type { RedisClient } from '../redis';
import { queuePrefix } from './prefix';
import { serviceQueue } from './telemetry';

export const LIFECYCLE_QUEUE = 'order-lifecycle';
export const LIFECYCLE_JOB = 'order-lifecycle';
const SCHEDULER_ID = 'order-lifecycle';

/** What one run did. */
export interface LifecycleCounts {
  /** Finished orders moved to the archive. */
  archived: number;
  /** Expired unsubmitted orders (SELECTING, NEW) moved to the archive. */
  expired: number;
  /** Archived orders past their retention removed. */
  purged: number;
  /** Expired commands removed. */
  commandsPurged: number;
  /** Webhook delivery log entries past WEBHOOK_LOG_RETENTION removed. */
  deliveriesPurged: number;
  /** Audit records past AUDIT_RETENTION removed. */
  auditPurged: number;
  /** Events of the feed past EVENT_RETENTION removed. */
  eventsPurged: number;
  /** Applied job ids orders moved to the ledger, past IDEMPOTENCY_TTL, removed. */
  appliedJobsPurged: number;
}

export const LIFECYCLE_COUNTS: (keyof LifecycleCounts)[] = [
  'archived',
  'expired',
  'purged',
  'commandsPurged',
  'deliveriesPurged',
  'auditPurged',
  'eventsPurged',
  'appliedJobsPurged',
];

export interface LifecycleRun extends LifecycleCounts {
  durationMs: number;
  /** False when the run stopped at its time budget (or at shutdown) with work left for the next. */
  complete: boolean;
}

export interface LifecycleStats {
  runs: number;
  runSeconds: number;
  totals: LifecycleCounts;
  last?: LifecycleRun & { finishedAt: number };
}

const statsKey = (prefix: string) => `${prefix}:lifecycle:stats`;

/** Finished runs are kept a while for Bull Board; each carries its figures as its return value. */
const KEEP_RUNS = { count: 100 };

export const lifecyclePrefix = (redis: Pick<RedisConfig, 'prefix' | 'cluster'>): string =>
  queuePrefix(redis, 'lifecycle');

export function createLifecycleQueue(
  connection: RedisClient,
  redis: Pick<RedisConfig, 'prefix' | 'cluster'>,
  log: Logger,
): Queue {
  return serviceQueue<unknown>(LIFECYCLE_QUEUE, { connection, prefix: lifecyclePrefix(redis) }, 'lifecycle', log);
}

/**
 * One run at a time across every worker (global concurrency 1: a run that outlasts the interval,
 * or a crashed run's job waiting for stalled-job recovery, holds the next one back), on a
 * schedule every worker upserts at start. The scheduled jobs have fixed ids, so that many
 * workers upserting create one job per tick. A failed run is not retried: the next one is.
 */
export async function scheduleLifecycle(queue: Queue, everyMs: number): Promise<void> {
  await queue.setGlobalConcurrency(1);
  await queue.upsertJobScheduler(
    SCHEDULER_ID,
    { every: everyMs },
    { name: LIFECYCLE_JOB, data: {}, opts: { attempts: 1, removeOnComplete: KEEP_RUNS, removeOnFail: KEEP_RUNS } },
  );
}

/** Adds a run's figures to the totals and makes it the last run (one round trip). */
export async function recordLifecycleRun(
  redis: RedisClient,
  prefix: string,
  run: LifecycleRun,
  finishedAt: number,
): Promise<void> {
  const key = statsKey(prefix);
  const multi = redis
    .multi()
    .hincrby(key, 'runs', 1)
    .hincrbyfloat(key, 'runSeconds', run.durationMs / 1000);
  for (const name of LIFECYCLE_COUNTS) multi.hincrby(key, name, run[name]);
  multi.hset(key, {
    ...Object.fromEntries(LIFECYCLE_COUNTS.map((name) => [`last.${name}`, run[name]])),
    'last.durationMs': run.durationMs,
    'last.complete': run.complete ? 1 : 0,
    'last.finishedAt': finishedAt,
  });
  const results = await multi.exec();
  const failed = results?.find(([err]) => err);
  if (failed) throw failed[0];
}

/** The figures of every run so far; undefined before the first. */
export async function readLifecycleStats(
  redis: Pick<RedisClient, 'hgetall'>,
  prefix: string,
): Promise<LifecycleStats | undefined> {
  const hash = await redis.hgetall(statsKey(prefix));
  if (!hash.runs) return undefined;
  const num = (field: string) => Number(hash[field] ?? 0);
  const counts = (prefixed: string) =>
    Object.fromEntries(LIFECYCLE_COUNTS.map((name) => [name, num(`${prefixed}${name}`)])) as unknown as LifecycleCounts;
  return {
    runs: num('runs'),
    runSeconds: num('runSeconds'),
    totals: counts(''),
    last: hash['last.finishedAt']
      ? {
          ...counts('last.'),
          durationMs: num('last.durationMs'),
          complete: hash['last.complete'] === '1',
          finishedAt: num('last.finishedAt'),
        }
      : undefined,
  };
}
