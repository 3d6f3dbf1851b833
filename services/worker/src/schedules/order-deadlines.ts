import { Job, Queue, Worker } from 'bullmq';
import type { Config } from '@pos/shared/config';
import { Announcer, redisPublisher } from '@pos/shared/events/announcements';
import type { Logger } from '@pos/shared/log';
import { overdueOutbox } from '@pos/shared/events/outbox';
import {
  countOverdueOnce,
  ORDER_DEADLINE_JOB,
  ORDER_DEADLINE_QUEUE,
  OrderDeadlineJob,
  orderDeadlinePrefix,
} from '@pos/shared/queue/order-deadlines';
import type { RedisClient } from '@pos/shared/redis';
import type { OrdersRepo } from '@pos/shared/store/orders';
import { settleWithin } from '@pos/shared/util/timeout';
import { withTelemetry } from '@pos/shared/queue/telemetry';
import type { Checkpoint } from '../fault-injection';
import type { JobContext } from '../transitions/context';
import { applyOrderAction } from '../transitions/order-action';

export interface RunningOrderDeadlines {
  close(): Promise<void>;
}

/**
 * The order deadlines on this worker (docs/presence-and-deadlines.md).
 *
 * An order deadline job marks its placement overdue with one guarded write, and only that job announces
 * it and counts it: once per placement, however many workers or copies of the job. The write
 * records the job, so that the job run again after a crash between its write and its announcement
 * announces it then (the count kept once by a key per job). An
 * auto-abort goes through the order transition every other job uses (version-guarded, its job id
 * recorded on the order), so a register's COMPLETED that lands first wins.
 */
export interface OrderDeadlineOptions {
  config: Pick<Config, 'redis' | 'worker' | 'process'>;
  log: Logger;
  redis: RedisClient;
  workerConnection: RedisClient;
  /** The order deadline queue, which the worker's placements add to as well (follow-ups.ts). */
  queue: Queue<OrderDeadlineJob>;
  orders: Pick<OrdersRepo, 'markOverdue' | 'markedOverdueBy'>;
  /** A job context for an auto-abort: an order transition run outside the transition queue. */
  contextFor(jobId: string, log: Logger, announcer: Announcer, runBefore: boolean): JobContext;
  /** FAULT_INJECT's crash points (tests). */
  checkpoint: Checkpoint;
}

/** Marks the placement overdue (once) and announces it; what it came to. */
async function markOverdue(
  options: OrderDeadlineOptions,
  announcer: Announcer,
  job: Job<OrderDeadlineJob>,
  log: Logger,
): Promise<string> {
  const { orders, redis } = options;
  const { locationId, orderNumber, orderTime } = job.data;
  const placedAt = new Date(orderTime);
  const now = new Date();
  const marked = await orders.markOverdue(locationId, orderNumber, placedAt, now, job.id!, (after) =>
    overdueOutbox(after, now),
  );
  if (marked) {
    log.info({ orderTime: placedAt.toISOString() }, 'order overdue');
    options.checkpoint('after-overdue-mark');
  }
  // A run after one that died (stalled, or failed) may find the mark its own: the count and the
  // announcement that run may not have made are made now (counted once; an announcement is safe to repeat).
  const order =
    marked ??
    (job.attemptsStarted > 1 ? await orders.markedOverdueBy(locationId, orderNumber, placedAt, job.id!) : null);
  if (!order) return 'moved on';
  await Promise.all([countOverdueOnce(redis, options.config.redis.prefix, job.id!), announcer.overdue(order)]);
  return marked ? 'overdue' : 'overdue, announced again';
}

export async function startOrderDeadlines(options: OrderDeadlineOptions): Promise<RunningOrderDeadlines> {
  const { config, redis, queue } = options;
  const log = options.log.child({ queue: ORDER_DEADLINE_QUEUE });
  const announcer = new Announcer(redisPublisher(redis), config.redis.prefix);

  const runJob = async (job: Job<OrderDeadlineJob>): Promise<string> => {
    const { locationId, orderNumber, orderTime } = job.data;
    const jobLog = log.child({ jobId: job.id, job: job.name, locationId, orderNumber });
    if (job.name === ORDER_DEADLINE_JOB.overdue) return markOverdue(options, announcer, job, jobLog);
    if (job.name === ORDER_DEADLINE_JOB.autoAbort) {
      const ctx = options.contextFor(job.id!, jobLog, announcer, job.attemptsStarted > 1);
      const outcome = await applyOrderAction(ctx, {
        scope: { locationId },
        orderNumber,
        action: { kind: 'auto-abort', placedAt: orderTime },
      });
      return String(outcome.status);
    }
    throw new Error(`unknown job ${job.name}`);
  };

  const lock = { lockDuration: config.worker.jobLockDurationMs, stalledInterval: config.worker.jobLockDurationMs };
  const orderDeadlineWorker = new Worker<OrderDeadlineJob, string>(
    ORDER_DEADLINE_QUEUE,
    runJob,
    withTelemetry({
      connection: options.workerConnection,
      prefix: orderDeadlinePrefix(config.redis),
      concurrency: 4,
      ...lock,
    }),
  );
  orderDeadlineWorker.on('failed', (job, err) =>
    log.warn({ err, jobId: job?.id, job: job?.name }, 'order deadline job failed'),
  );
  orderDeadlineWorker.on('error', (err) => log.error({ err }, 'order deadline worker error'));
  await orderDeadlineWorker.waitUntilReady();

  return {
    async close() {
      await settleWithin(
        orderDeadlineWorker.close(),
        config.process.shutdownGraceMs,
        log,
        'finishing the order deadline jobs',
      );
      await settleWithin(queue.close(), 2_000, log, 'closing the order deadline queue');
    },
  };
}
