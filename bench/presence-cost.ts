/**
 * What register presence adds to a request (docs/presence-and-deadlines.md#cost): always on, so
 * its share is isolated: the tracker's work on a request timed alone, and its Redis writes read
 * from the commands of the bench's poll runs.
 */
import { createLogger } from '@pos/shared/log';
import type { RedisClient } from '@pos/shared/redis';
import type { SessionDoc } from '@pos/shared/store/documents';
import { PresenceTracker } from '@pos/api/presence/presence-tracker';
import type { Cost } from './cost';
import { round } from './statistics';

/** The Redis commands presence writes, by INFO commandstats name. */
const PRESENCE_COMMANDS = ['hset', 'pexpire', 'zadd'];

export interface PresenceCost {
  /** CPU of the tracker's work on one request, ns (timed alone, in the bench's process). */
  trackerCpuNsPerRequest: number;
  /** Presence's Redis writes per poll (from the 16-client poll run: at most the commands it names). */
  redisCommandsPerPoll: number;
}

/**
 * Times `sightings` sightings of one session: the first writes it (to the bench's
 * Redis, under its own prefix), the others fall within the window.
 */
export function trackerCpuNs(redis: RedisClient, sightings = 1_000_000): number {
  const tracker = new PresenceTracker({
    redis,
    prefix: 'bench-cpu',
    nodeId: 'n',
    windowMs: 3_600_000,
    log: createLogger('silent', 'bench'),
  });
  const session = {
    _id: 's1',
    locationId: 'l1',
    deviceId: 'd',
    type: 'SERVICE',
    keyHash: '',
    createdAt: new Date(),
  } as SessionDoc;
  const now = Date.now();
  tracker.sighted(session, now - 1);
  const cpu = process.cpuUsage();
  for (let i = 0; i < sightings; i++) tracker.sighted(session);
  const used = process.cpuUsage(cpu);
  tracker.stop();
  return round(((used.user + used.system) * 1000) / sightings, 0);
}

export function presenceCost(redis: RedisClient, poll: Cost | undefined): PresenceCost {
  const writes = PRESENCE_COMMANDS.reduce((sum, name) => sum + (poll?.redisByCommand[name] ?? 0), 0);
  return { trackerCpuNsPerRequest: trackerCpuNs(redis), redisCommandsPerPoll: round(writes, 3) };
}
