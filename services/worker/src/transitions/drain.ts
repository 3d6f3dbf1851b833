import { Queue } from 'bullmq';
import type { Logger } from '@pos/shared/log';
import { TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import type { Partition } from '@pos/shared/queue/partitions';
import type { RedisClient } from '@pos/shared/redis';
import { withTelemetry } from '@pos/shared/queue/telemetry';

const DRAIN_CHECK_MS = 5_000;
const LIVE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * Draining the partitions of an earlier layout (QUEUE_DRAIN_PARTITIONS) while the worker consumes
 * them like its own: their job schedulers are removed (the current layout's first partition
 * carries the schedules, so each runs once per interval), and the worker logs
 * `drained partitions are empty` whenever they become empty, the cue to drop the setting once
 * every API node adds to the new layout.
 */
export async function watchDrain(
  drained: Partition[],
  connection: RedisClient,
  log: Logger,
): Promise<{ stop(): Promise<void> }> {
  const partitions = drained.map((partition) => partition.label);
  // (read only: the worker consumes them through its own Workers)
  const draining = drained.map((partition) => {
    const queue = new Queue(TRANSITION_QUEUE, withTelemetry({ connection, prefix: partition.prefix }));
    queue.on('error', (err: Error) =>
      log.warn({ err: err.message, partition: partition.label }, 'drained queue connection error'),
    );
    return { partition, queue };
  });
  for (const { queue, partition } of draining) {
    for (const scheduler of await queue.getJobSchedulers()) {
      await queue.removeJobScheduler(scheduler.key);
      log.info(
        { partition: partition.label, scheduler: scheduler.key },
        'job scheduler of a drained partition removed',
      );
    }
  }

  let empty = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const check = async () => {
    try {
      const counts = await Promise.all(draining.map(({ queue }) => queue.getJobCounts(...LIVE_STATES)));
      const left = counts.reduce(
        (sum, byState) => sum + LIVE_STATES.reduce((n, state) => n + (byState[state] ?? 0), 0),
        0,
      );
      if (left === 0 && !empty) log.info({ partitions }, 'drained partitions are empty');
      else if (left > 0 && empty) log.info({ partitions, jobs: left }, 'drained partitions hold jobs again');
      empty = left === 0;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'could not count the jobs of the drained partitions');
    }
    if (!stopped) timer = setTimeout(() => void check(), DRAIN_CHECK_MS).unref();
  };
  log.info({ partitions }, 'draining the partitions of an earlier layout');
  await check();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(draining.map(({ queue }) => queue.close()));
    },
  };
}
