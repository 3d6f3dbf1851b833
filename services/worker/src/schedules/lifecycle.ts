import { Job, Worker } from 'bullmq';
import type { Config } from '@pos/shared/config';
import type { Logger } from '@pos/shared/log';
import {
  createLifecycleQueue,
  LIFECYCLE_COUNTS,
  LIFECYCLE_JOB,
  LIFECYCLE_QUEUE,
  LifecycleRun,
  lifecyclePrefix,
  recordLifecycleRun,
  scheduleLifecycle,
} from '@pos/shared/queue/lifecycle';
import type { RedisClient } from '@pos/shared/redis';
import { withTelemetry } from '@pos/shared/queue/telemetry';
import { settleWithin } from '@pos/shared/util/timeout';
import { LifecycleDeps, runLifecycle } from './lifecycle-run';

/** Orders per MongoDB command: large enough that a backlog drains in few round trips. */
const BATCH_SIZE = 500;
/** A run stops starting batches after this long (or after the interval, when shorter). */
const MAX_RUN_MS = 30_000;

export interface RunningLifecycle {
  /** Ends the run in hand after its current batch and stops taking runs. */
  close(): Promise<void>;
}

export interface LifecycleOptions {
  config: Pick<Config, 'lifecycle' | 'webhooks' | 'redis' | 'worker' | 'process'>;
  log: Logger;
  /** A request-path connection of the worker (stats writes). */
  redis: RedisClient;
  /** The worker's connection for BullMQ queues. */
  queueRedis: RedisClient;
  /** The worker's connection for BullMQ Workers (no retry limit), which the caller closes. */
  workerConnection: RedisClient;
  deps: Omit<LifecycleDeps, 'log'>;
}

/**
 * The order lifecycle job on this worker: upserts the schedule (every worker does; the ids are
 * fixed) and takes runs, one at a time here and, by the queue's global concurrency, everywhere.
 * Each run's figures go to Redis, where the API nodes' /metrics read them.
 */
export async function startLifecycle(options: LifecycleOptions): Promise<RunningLifecycle> {
  const { config, redis } = options;
  const log = options.log.child({ job: LIFECYCLE_JOB });
  const queue = createLifecycleQueue(options.queueRedis, config.redis, log);
  await scheduleLifecycle(queue, config.lifecycle.intervalMs);

  const stopping = new AbortController();
  const settings = { ...config.lifecycle, eventRetentionMs: config.webhooks.eventRetentionMs };
  const limits = {
    batchSize: BATCH_SIZE,
    budgetMs: Math.min(settings.intervalMs, MAX_RUN_MS),
    signal: stopping.signal,
  };

  const process_ = async (job: Job): Promise<LifecycleRun> => {
    if (job.name !== LIFECYCLE_JOB) throw new Error(`unknown job ${job.name}`);
    const runLog = log.child({ jobId: job.id });
    const run = await runLifecycle({ ...options.deps, log: runLog }, settings, limits);
    await recordLifecycleRun(redis, config.redis.prefix, run, Date.now());
    const moved = LIFECYCLE_COUNTS.reduce((sum, count) => sum + run[count], 0);
    if (moved > 0 || !run.complete) runLog.info(run, 'lifecycle run');
    else runLog.debug(run, 'lifecycle run');
    return run;
  };

  const worker = new Worker<unknown, LifecycleRun>(
    LIFECYCLE_QUEUE,
    process_,
    withTelemetry({
      connection: options.workerConnection,
      prefix: lifecyclePrefix(config.redis),
      concurrency: 1,
      lockDuration: config.worker.jobLockDurationMs,
      stalledInterval: config.worker.jobLockDurationMs,
      // A run whose worker died is run once more (finishing what it began); then the schedule goes on.
      maxStalledCount: 1,
    }),
  );
  worker.on('failed', (job, err) =>
    log.error({ err, jobId: job?.id }, 'lifecycle run failed; the next run takes over'),
  );
  worker.on('error', (err) => log.error({ err }, 'lifecycle worker error'));
  await worker.waitUntilReady();
  log.info(
    { everyMs: settings.intervalMs, archiveAfterMs: settings.archiveAfterMs, selectingTtlMs: settings.selectingTtlMs },
    'lifecycle job scheduled',
  );

  return {
    async close() {
      stopping.abort();
      await settleWithin(worker.close(), config.process.shutdownGraceMs, log, 'finishing the lifecycle run');
      await settleWithin(queue.close(), 2_000, log, 'closing the lifecycle queue');
    },
  };
}
