/**
 * The ends of timed snoozes on this worker (docs/menu.md): each job removes its snooze, if it is
 * still the one with that `until`, with the product's `menu.item_availability_changed` in the
 * same guarded write. The event's id is keyed by the snooze's `until`, so a job run again (a
 * worker died after its write) records it once.
 */
import { Job, Worker, type Queue } from 'bullmq';
import type { Config } from '@pos/shared/config';
import { menuOutbox } from '@pos/shared/events/outbox';
import type { Logger } from '@pos/shared/log';
import { SNOOZE_END_JOB, SNOOZE_END_QUEUE, type SnoozeEndJob, snoozeEndPrefix } from '@pos/shared/queue/snooze-ends';
import { withTelemetry } from '@pos/shared/queue/telemetry';
import type { RedisClient } from '@pos/shared/redis';
import type { MenusRepo } from '@pos/shared/store/menus';
import { settleWithin } from '@pos/shared/util/timeout';

export interface RunningSnoozeEnds {
  close(): Promise<void>;
}

export interface SnoozeEndOptions {
  config: Pick<Config, 'redis' | 'worker' | 'process'>;
  log: Logger;
  workerConnection: RedisClient;
  queue: Queue<SnoozeEndJob>;
  menus: Pick<MenusRepo, 'endSnooze'>;
}

export async function startSnoozeEnds(options: SnoozeEndOptions): Promise<RunningSnoozeEnds> {
  const { config, queue, menus } = options;
  const log = options.log.child({ queue: SNOOZE_END_QUEUE });

  const runJob = async (job: Job<SnoozeEndJob>): Promise<string> => {
    if (job.name !== SNOOZE_END_JOB) throw new Error(`unknown job ${job.name}`);
    const { locationId, productId, until } = job.data;
    const at = new Date(until);
    const ended = await menus.endSnooze(
      locationId,
      productId,
      at,
      menuOutbox({ type: 'menu-availability', productId, available: true, at: until }, new Date()),
    );
    if (!ended) return 'changed since';
    log.info({ jobId: job.id, locationId, productId }, 'snooze ended');
    return 'ended';
  };

  const lock = { lockDuration: config.worker.jobLockDurationMs, stalledInterval: config.worker.jobLockDurationMs };
  const worker = new Worker<SnoozeEndJob, string>(
    SNOOZE_END_QUEUE,
    runJob,
    withTelemetry({
      connection: options.workerConnection,
      prefix: snoozeEndPrefix(config.redis),
      concurrency: 4,
      ...lock,
    }),
  );
  worker.on('failed', (job, err) => log.warn({ err, jobId: job?.id }, 'snooze end job failed'));
  worker.on('error', (err) => log.error({ err }, 'snooze end worker error'));
  await worker.waitUntilReady();

  return {
    async close() {
      await settleWithin(worker.close(), config.process.shutdownGraceMs, log, 'finishing the snooze end jobs');
      await settleWithin(queue.close(), 2_000, log, 'closing the snooze end queue');
    },
  };
}
