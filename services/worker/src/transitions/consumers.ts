/**
 * The transition queue's consumers on this worker: one BullMQ Worker per partition (the current
 * layout's and any being drained), each running jobs through the JobProcessor; a job that fails
 * for good is answered with its problem, and every finished job is counted.
 */
import { randomUUID } from 'node:crypto';
import { UnrecoverableError, Worker } from 'bullmq';
import type { WorkerConfig } from '@pos/shared/config';
import { problems } from '@pos/shared/domain/problem';
import type { Logger } from '@pos/shared/log';
import { isNotApplied, JobOutcome, TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import type { Partition } from '@pos/shared/queue/partitions';
import { withTelemetry } from '@pos/shared/queue/telemetry';
import type { RedisClient } from '@pos/shared/redis';
import { storeProblem } from '@pos/shared/store/store-errors';
import type { WorkerMetrics } from '../metrics';
import { type JobData, jobFields, JobProcessor } from './processor';

const RUN_RETRY_DELAY_MS = 1_000;

export function consumePartition(options: {
  partition: Partition;
  /** The worker's connection for BullMQ Workers (no retry limit), which the caller closes. */
  connection: RedisClient;
  config: Pick<WorkerConfig, 'concurrency' | 'jobLockDurationMs'>;
  processor: JobProcessor;
  metrics: Pick<WorkerMetrics, 'jobsProcessed'>;
  log: Logger;
}): Worker<JobData, JobOutcome> {
  const { partition, config, processor, metrics } = options;
  const worker = new Worker<JobData, JobOutcome>(
    TRANSITION_QUEUE,
    (job) => processor.process(job),
    withTelemetry({
      connection: options.connection,
      prefix: partition.prefix,
      concurrency: config.concurrency,
      lockDuration: config.jobLockDurationMs,
      stalledInterval: config.jobLockDurationMs,
      maxStalledCount: 3,
      // After a lost connection (a failed-over master) fetch again soon: BullMQ's 15 s default
      // would leave the partition idle well past JOB_TIMEOUT once Redis is back.
      runRetryDelay: RUN_RETRY_DELAY_MS,
    }),
  );
  const log = partition.label ? options.log.child({ partition: partition.label }) : options.log;
  worker.on('failed', (job, err) => {
    if (!job) return;
    const jobLog = log.child(jobFields(job));
    const final = err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
    if (!final) {
      jobLog.warn({ err, attempt: job.attemptsMade }, 'job attempt failed; it will be retried');
      return;
    }
    const errorId = randomUUID();
    jobLog.error({ err, errorId }, 'job failed for good');
    metrics.jobsProcessed.inc({ job: job.name, status: 'failed' });
    const problem = storeProblem(err, errorId) ?? problems.internal(errorId);
    processor.reply(job, { status: problem.status, problem }).catch((e) => jobLog.error({ err: e }, 'reply failed'));
  });
  worker.on('error', (err) => log.error({ err }, 'worker error'));
  // A job taken too late is `expired`: it is not work done.
  worker.on('completed', (job, outcome) =>
    metrics.jobsProcessed.inc({ job: job.name, status: isNotApplied(outcome) ? 'expired' : String(outcome?.status) }),
  );
  return worker;
}
