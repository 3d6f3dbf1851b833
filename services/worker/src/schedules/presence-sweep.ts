/**
 * The presence sweep on this worker (docs/presence-and-deadlines.md).
 *
 * The sweep (one at a time across the workers, every quarter of PRESENCE_WINDOW) reads the
 * presence of every location seen lately or announced online, and writes each change with a
 * guarded update: the write that matched announces it. It also ends timed pauses that are due.
 * Each write records its change as unannounced until announced, so that a sweep dying in between
 * leaves it to the next one.
 */
import { Job, Worker } from 'bullmq';
import type { Config } from '@pos/shared/config';
import { Announcer, redisPublisher } from '@pos/shared/events/announcements';
import type { Logger } from '@pos/shared/log';
import { locationOutbox } from '@pos/shared/events/outbox';
import {
  clearPresence,
  locationsSeenSince,
  pruneHeartbeats,
  readHeartbeats,
  readPresence,
} from '@pos/shared/presence/presence-store';
import {
  createPresenceQueue,
  PRESENCE_QUEUE,
  PRESENCE_SWEEP_JOB,
  presencePrefix,
  schedulePresenceSweep,
} from '@pos/shared/queue/presence';
import { withTelemetry } from '@pos/shared/queue/telemetry';
import type { RedisClient } from '@pos/shared/redis';
import type { LocationDoc } from '@pos/shared/store/documents';
import type { LocationsRepo } from '@pos/shared/store/locations';
import { settleWithin } from '@pos/shared/util/timeout';
import type { Checkpoint } from '../fault-injection';

export interface RunningPresenceSweep {
  close(): Promise<void>;
}

export interface PresenceSweepOptions {
  config: Pick<Config, 'presence' | 'redis' | 'worker' | 'process'>;
  log: Logger;
  redis: RedisClient;
  /** The worker's connection for BullMQ queues. */
  queueRedis: RedisClient;
  workerConnection: RedisClient;
  locations: Pick<
    LocationsRepo,
    'announcedOnline' | 'onlineIds' | 'setOnline' | 'pausesEnded' | 'resume' | 'unannouncedChanges' | 'announced'
  >;
  /** FAULT_INJECT's crash points (tests). */
  checkpoint: Checkpoint;
}

/** One sweep: what an earlier one did not announce, each location's presence, the pauses that ended. */
class PresenceSweep {
  private readonly announcer: Announcer;

  constructor(
    private readonly options: PresenceSweepOptions,
    private readonly log: Logger,
  ) {
    this.announcer = new Announcer(redisPublisher(options.redis), options.config.redis.prefix);
  }

  async run(): Promise<void> {
    // What an earlier sweep wrote and did not live to announce (its announcement is safe to repeat).
    for (const doc of await this.options.locations.unannouncedChanges()) {
      this.log.info({ locationId: doc._id, changes: doc.unannounced }, 'announcing what an earlier sweep wrote');
      await this.announce(doc);
    }
    const now = Date.now();
    await this.presence(now);
    await this.pausesEnded(new Date(now));
  }

  /** Each location seen lately, or announced online: online as its registers' presence says. */
  private async presence(now: number): Promise<void> {
    const { redis, locations, config } = this.options;
    const { prefix } = config.redis;
    const windowMs = config.presence.windowMs;
    const at = new Date(now);
    const seen = await locationsSeenSince(redis, prefix, now - 2 * windowMs);
    const candidates = [...new Set([...seen, ...(await locations.onlineIds())])];
    const announced = await locations.announcedOnline(candidates);
    const heartbeats = await readHeartbeats(redis, prefix);
    await pruneHeartbeats(redis, prefix, heartbeats, now - 2 * windowMs);
    for (const locationId of candidates) {
      if (!announced.has(locationId)) {
        await clearPresence(redis, prefix, locationId); // a location that is no more
        continue;
      }
      const { online } = await readPresence(redis, prefix, locationId, windowMs, now, heartbeats);
      if (online === announced.get(locationId)) continue;
      const changed = await locations.setOnline(locationId, online, at, (after) =>
        locationOutbox(after, online ? 'online' : 'offline', at),
      );
      if (!changed) continue;
      this.log.info({ locationId, online }, online ? 'location online' : 'location offline');
      this.options.checkpoint('after-location-change');
      await this.announce(changed);
    }
  }

  private async pausesEnded(at: Date): Promise<void> {
    const { locations } = this.options;
    for (const locationId of await locations.pausesEnded(at)) {
      const resumed = await locations.resume(locationId, at, at, (after) => locationOutbox(after, 'resumed', at));
      if (!resumed) continue;
      this.log.info({ locationId }, 'location pause ended');
      await this.announce(resumed);
    }
  }

  /** Announces the changes the sweep wrote on `doc`, each still true of it, then clears them. */
  private async announce(doc: LocationDoc): Promise<void> {
    const changes = doc.unannounced ?? [];
    for (const change of changes) {
      const current =
        change === 'resumed' ? doc.pausedAt === undefined : (change === 'online') === (doc.online === true);
      if (current) await this.announcer.location(doc, change);
    }
    await this.options.locations.announced(doc._id, changes);
  }
}

export async function startPresenceSweep(options: PresenceSweepOptions): Promise<RunningPresenceSweep> {
  const { config } = options;
  const log = options.log.child({ queue: PRESENCE_QUEUE });
  const queue = createPresenceQueue(options.queueRedis, config.redis, log);
  await schedulePresenceSweep(queue, config.presence.windowMs);
  const sweep = new PresenceSweep(options, log);

  const lock = { lockDuration: config.worker.jobLockDurationMs, stalledInterval: config.worker.jobLockDurationMs };
  const worker = new Worker(
    PRESENCE_QUEUE,
    async (job: Job) => {
      if (job.name !== PRESENCE_SWEEP_JOB) throw new Error(`unknown job ${job.name}`);
      await sweep.run();
    },
    withTelemetry({
      connection: options.workerConnection,
      prefix: presencePrefix(config.redis),
      concurrency: 1,
      maxStalledCount: 1,
      ...lock,
    }),
  );
  worker.on('failed', (job, err) => log.warn({ err, jobId: job?.id, job: job?.name }, 'presence sweep failed'));
  worker.on('error', (err) => log.error({ err }, 'presence worker error'));
  await worker.waitUntilReady();

  return {
    async close() {
      await settleWithin(worker.close(), config.process.shutdownGraceMs, log, 'finishing the presence sweep');
      await settleWithin(queue.close(), 2_000, log, 'closing the presence queue');
    },
  };
}
