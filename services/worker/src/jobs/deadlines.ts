import { Job, Queue, Worker } from 'bullmq';
import type { Config } from '@pos/shared/config';
import { EventPublisher, redisPublisher, WebhookSink } from '@pos/shared/events/location-events';
import type { Logger } from '@pos/shared/log';
import { locationsSeenSince, readPresence } from '@pos/shared/presence/presence-store';
import {
  createDeadlineQueue,
  createPresenceQueue,
  DEADLINE_JOB,
  DEADLINE_QUEUE,
  DeadlineJob,
  deadlinePrefix,
  countOverdueOnce,
  PRESENCE_QUEUE,
  PRESENCE_SWEEP_JOB,
  presencePrefix,
  schedulePresenceSweep,
} from '@pos/shared/queue/deadlines';
import type { RedisClient } from '@pos/shared/redis';
import type { LocationDoc } from '@pos/shared/store/documents';
import type { LocationsRepo } from '@pos/shared/store/locations';
import type { OrdersRepo } from '@pos/shared/store/orders';
import { settleWithin } from '@pos/shared/util/deadline';
import { withTelemetry } from '@pos/shared/queue/telemetry';
import type { Checkpoint } from '../fault-injection';
import type { JobContext } from './context';
import { applyOrderAction } from './order-action';

export interface RunningDeadlines {
  /** Where placements add their deadline jobs (the worker's follow-ups). */
  queue: Queue<DeadlineJob>;
  close(): Promise<void>;
}

/**
 * The order deadlines and the presence sweep on this worker (docs/presence-and-deadlines.md).
 *
 * A deadline job marks its placement overdue with one guarded write, and only that job announces
 * it and counts it: once per placement, however many workers or copies of the job. The write
 * records the job, so that the job run again after a crash between its write and its announcement
 * announces it then (the count kept once by a key per job). An
 * auto-abort goes through the order transition every other job uses (version-guarded, its job id
 * recorded on the order), so a register's COMPLETED that lands first wins.
 *
 * The sweep (one at a time across the workers, every quarter of PRESENCE_WINDOW) reads the
 * presence of every location seen lately or announced online, and writes each change with a
 * guarded update: the write that matched announces it. It also ends timed pauses that are due.
 * Each write records its change as unannounced until announced, so that a sweep dying in between
 * leaves it to the next one.
 */
export async function startDeadlines(options: {
  config: Pick<Config, 'presence' | 'redis' | 'worker' | 'process'>;
  log: Logger;
  redis: RedisClient;
  workerConnection: RedisClient;
  orders: Pick<OrdersRepo, 'markOverdue' | 'markedOverdueBy'>;
  locations: Pick<LocationsRepo, 'announcedOnline' | 'onlineIds' | 'setOnline' | 'pausesEnded' | 'resume' | 'unannouncedChanges' | 'announced'>;
  /** Where location, overdue and auto-abort events go for the webhooks. */
  webhooks: WebhookSink;
  /** A job context for an order transition run by this worker outside the work queue. */
  contextFor(jobId: string, log: Logger, events: EventPublisher): JobContext;
  /** FAULT_INJECT's crash points (tests). */
  checkpoint: Checkpoint;
}): Promise<RunningDeadlines> {
  const { config, redis, orders, locations } = options;
  const { prefix } = config.redis;
  const log = options.log.child({ queue: DEADLINE_QUEUE });
  const events = new EventPublisher(redisPublisher(redis), prefix, options.webhooks);
  const queue = createDeadlineQueue(redis, config.redis, log);
  const presenceQueue = createPresenceQueue(redis, config.redis, log);
  const windowMs = config.presence.windowMs;
  await schedulePresenceSweep(presenceQueue, windowMs);

  const deadline = async (job: Job<DeadlineJob>): Promise<string> => {
    const { locationId, orderNumber, orderTime } = job.data;
    const jobLog = log.child({ jobId: job.id, job: job.name, locationId, orderNumber });
    if (job.name === DEADLINE_JOB.overdue) {
      const placedAt = new Date(orderTime);
      const marked = await orders.markOverdue(locationId, orderNumber, placedAt, new Date(), job.id!);
      if (marked) {
        jobLog.info({ orderTime: placedAt.toISOString() }, 'order overdue');
        options.checkpoint('after-overdue-mark');
      }
      // A run after one that died (stalled, or failed) may find the mark its own: the count and the
      // announcement that run may not have made are made now (counted once; an announcement is safe to repeat).
      const order = marked ?? (job.attemptsStarted > 1 ? await orders.markedOverdueBy(locationId, orderNumber, placedAt, job.id!) : null);
      if (!order) return 'moved on';
      await Promise.all([countOverdueOnce(redis, prefix, job.id!), events.overdue(order)]);
      return marked ? 'overdue' : 'overdue, announced again';
    }
    if (job.name === DEADLINE_JOB.autoAbort) {
      const ctx = options.contextFor(job.id!, jobLog, events);
      const outcome = await applyOrderAction(ctx, { scope: { locationId }, orderNumber, action: { kind: 'auto-abort', placedAt: orderTime } });
      return String(outcome.status);
    }
    throw new Error(`unknown job ${job.name}`);
  };

  /** Announces the changes the sweep wrote on `doc`, each still true of it, then clears them. */
  const announce = async (doc: LocationDoc): Promise<void> => {
    const changes = doc.unannounced ?? [];
    for (const change of changes) {
      const current = change === 'resumed' ? doc.pausedAt === undefined : (change === 'online') === (doc.online === true);
      if (current) await events.location(doc, change);
    }
    await locations.announced(doc._id, changes);
  };

  const sweep = async (): Promise<void> => {
    // What an earlier sweep wrote and did not live to announce (its announcement is safe to repeat).
    for (const doc of await locations.unannouncedChanges()) {
      log.info({ locationId: doc._id, changes: doc.unannounced }, 'announcing what an earlier sweep wrote');
      await announce(doc);
    }
    const now = Date.now();
    const at = new Date(now);
    const seen = await locationsSeenSince(redis, prefix, now - 2 * windowMs);
    const candidates = [...new Set([...seen, ...(await locations.onlineIds())])];
    const announced = await locations.announcedOnline(candidates);
    for (const locationId of candidates) {
      if (!announced.has(locationId)) continue; // a location that is no more
      const { online } = await readPresence(redis, prefix, locationId, windowMs, now);
      if (online === announced.get(locationId)) continue;
      const changed = await locations.setOnline(locationId, online, at);
      if (!changed) continue;
      log.info({ locationId, online }, online ? 'location online' : 'location offline');
      options.checkpoint('after-location-change');
      await announce(changed);
    }
    for (const locationId of await locations.pausesEnded(at)) {
      const resumed = await locations.resume(locationId, at);
      if (!resumed) continue;
      log.info({ locationId }, 'location pause ended');
      await announce(resumed);
    }
  };

  const lock = { lockDuration: config.worker.jobLockDurationMs, stalledInterval: config.worker.jobLockDurationMs };
  const deadlineWorker = new Worker<DeadlineJob, string>(DEADLINE_QUEUE, deadline, withTelemetry({
    connection: options.workerConnection,
    prefix: deadlinePrefix(config.redis),
    concurrency: 4,
    ...lock,
  }));
  const sweepWorker = new Worker(
    PRESENCE_QUEUE,
    async (job: Job) => {
      if (job.name !== PRESENCE_SWEEP_JOB) throw new Error(`unknown job ${job.name}`);
      await sweep();
    },
    withTelemetry({ connection: options.workerConnection, prefix: presencePrefix(config.redis), concurrency: 1, maxStalledCount: 1, ...lock }),
  );
  for (const worker of [deadlineWorker, sweepWorker]) {
    worker.on('failed', (job, err) => log.warn({ err, jobId: job?.id, job: job?.name }, 'deadline or presence job failed'));
    worker.on('error', (err) => log.error({ err }, 'deadline or presence worker error'));
  }
  await Promise.all([deadlineWorker.waitUntilReady(), sweepWorker.waitUntilReady()]);

  return {
    queue,
    async close() {
      await settleWithin(Promise.all([deadlineWorker.close(), sweepWorker.close()]), config.process.shutdownGraceMs, log, 'finishing the deadline jobs');
      await settleWithin(Promise.all([queue.close(), presenceQueue.close()]), 2_000, log, 'closing the deadline queues');
    },
  };
}
