import { JobType, Queue } from 'bullmq';
import type { QueueConfig, RedisConfig } from '../config';
import type { Logger } from '../log';
import type { RedisClient } from '../redis';
import { TRANSITION_QUEUE, transitionJobOptions } from './jobs';
import { Partition, partitionLayout, partitionOf } from './partitions';
import { withTelemetry } from './telemetry';

/** Where a deployment's transition queues are: the layout it adds to, and an earlier one still drained. */
export interface QueueLayout {
  redisPrefix: string;
  cluster: boolean;
  partitions: number;
  /** QUEUE_DRAIN_PARTITIONS: an earlier partition count whose queues are consumed until empty. */
  drainPartitions?: number;
}

/** The layout the configuration's `redis` and `queue` sections give. */
export function queueLayout(config: {
  redis: Pick<RedisConfig, 'prefix' | 'cluster'>;
  queue: Pick<QueueConfig, 'partitions' | 'drainPartitions'>;
}): QueueLayout {
  const { redis, queue } = config;
  return {
    redisPrefix: redis.prefix,
    cluster: redis.cluster,
    partitions: queue.partitions,
    drainPartitions: queue.drainPartitions,
  };
}

/** The partitions jobs are added to, and those only drained (an earlier layout, none shared). */
export function layoutPartitions(layout: QueueLayout): { current: Partition[]; draining: Partition[] } {
  const current = partitionLayout(layout.redisPrefix, layout.partitions, layout.cluster);
  const prefixes = new Set(current.map((p) => p.prefix));
  const draining =
    layout.drainPartitions === undefined
      ? []
      : partitionLayout(layout.redisPrefix, layout.drainPartitions, layout.cluster).filter(
          (p) => !prefixes.has(p.prefix),
        );
  return { current, draining };
}

/** What a transition is routed by (the operation table's `partitionBy`; absent: its location). */
export type RoutedBy = 'location' | 'session';

/**
 * Which queue a transition goes to, decided here and only here, from what its request names: an
 * order's transitions by their location (so they start in the order they came), a session closing
 * by its session id (the admin closes a session by id alone; the orders it aborts are
 * version-guarded like any other write). The admission (api overload/admitted.ts) and the refusal
 * in front of the app (early-refusal.ts) both call it; the job client queues the job where it was
 * admitted. Undefined when the request names none (a malformed id, which its handler refuses).
 */
export function routingKey(by: RoutedBy, names: { locationId?: string; sessionId?: string }): string | undefined {
  return by === 'session' ? names.sessionId : names.locationId;
}

export interface PartitionQueue {
  partition: Partition;
  queue: Queue;
}

/**
 * The transition queues of a deployment, one BullMQ queue per partition on one connection: those jobs
 * are added to, and those of an earlier layout still being drained (read only: counts, Bull Board,
 * look-ups). Connection errors are logged (the connection retries by itself); without a listener
 * BullMQ prints them to the console.
 */
export class TransitionQueues {
  readonly current: PartitionQueue[];
  readonly draining: PartitionQueue[];

  /** `keepFailed`: JOB_KEEP_FAILED, the failed jobs each queue keeps (see transitionJobOptions). */
  constructor(connection: RedisClient, layout: QueueLayout, log: Logger, keepFailed: number) {
    const defaultJobOptions = transitionJobOptions(keepFailed);
    const open = (partition: Partition): PartitionQueue => {
      const queue = new Queue(
        TRANSITION_QUEUE,
        withTelemetry({ connection, prefix: partition.prefix, defaultJobOptions }),
      );
      queue.on('error', (err: Error) =>
        log.warn({ err: err.message, partition: partition.label }, 'transition queue connection error'),
      );
      return { partition, queue };
    };
    const { current, draining } = layoutPartitions(layout);
    this.current = current.map(open);
    this.draining = draining.map(open);
  }

  /** Every queue: the current layout's, then the drained ones. */
  get all(): PartitionQueue[] {
    return [...this.current, ...this.draining];
  }

  /** The queue (of the current layout) of a partition. */
  queueOf(partition: number): Queue {
    return this.current[partition]!.queue;
  }

  /** The partition of a job's routing key: a location's id for its order transitions, a session's for its close. */
  partitionOfKey(key: string): number {
    return partitionOf(key, this.current.length);
  }

  /** Job counts by state, summed over every queue. */
  async jobCounts(...states: JobType[]): Promise<Record<string, number>> {
    const counts = await Promise.all(this.all.map(({ queue }) => queue.getJobCounts(...states)));
    const sum: Record<string, number> = {};
    for (const state of states) sum[state] = counts.reduce((total, c) => total + (c[state] ?? 0), 0);
    return sum;
  }

  /**
   * When the oldest job now waiting in any queue was added (ms since the epoch), or undefined
   * when none waits: one script per queue reading the head of its wait list. A job retried after
   * a failure keeps its first add's time.
   */
  async oldestWaiting(): Promise<number | undefined> {
    const heads = await Promise.all(this.all.map(({ queue }) => queue.getJobs(['wait'], 0, 0, true)));
    const added = heads.flat().map((job) => job.timestamp);
    return added.length > 0 ? Math.min(...added) : undefined;
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map(({ queue }) => queue.close()));
  }
}
