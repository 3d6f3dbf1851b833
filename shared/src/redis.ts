import Redis, { RedisOptions } from 'ioredis';

/**
 * A Redis connection. BullMQ's blocking connections need `maxRetriesPerRequest: null`;
 * request-path connections keep a bound so that a Redis outage surfaces as an error (503).
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { enableReadyCheck: true, ...options });
}
