import Redis, { RedisOptions } from 'ioredis';
import type { Logger } from './log';
import { withDeadline } from './util/deadline';

/**
 * A Redis connection. BullMQ's blocking connections need `maxRetriesPerRequest: null`;
 * request-path connections keep a bound so that a Redis outage surfaces as an error (503).
 * With a logger, connection errors (ioredis reconnects on its own) are logged, not printed raw.
 */
export function createRedis(url: string, options: RedisOptions = {}, log?: Logger): Redis {
  const redis = new Redis(url, { enableReadyCheck: true, ...options });
  if (log) redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis connection error'));
  return redis;
}

/** QUIT when the connection is up (bounded), else drop it: QUIT would wait for a reconnect. */
export async function closeRedis(redis: Redis, ms = 1_000): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  try {
    await withDeadline(redis.quit(), ms, 'Redis QUIT');
  } catch {
    redis.disconnect();
  }
}
