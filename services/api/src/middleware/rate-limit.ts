import type { Next } from 'koa';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '@pos/shared/config';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { Logger } from '@pos/shared/log';
import type { RedisClient } from '@pos/shared/redis';
import { sessionOf, type AppContext } from '../context';

/** A Redis outage is logged at most this often, not once per request. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;
/**
 * After a count Redis failed (down, or not answering within REDIS_COMMAND_TIMEOUT), requests go
 * uncounted this long before Redis is asked again: a hung Redis costs one request that wait, not
 * every request. (rate-limiter-flexible's insuranceLimiter is asked only once the store call has
 * failed, so it would not spare the wait; and counting per node would turn an outage into 429s.)
 */
const OUTAGE_BYPASS_MS = 5_000;

export interface RateLimiterOptions {
  limit: RateLimit;
  redis: RedisClient;
  /** The Redis key prefix of its counters. */
  keyPrefix: string;
  /** The policy's name in the RateLimit headers (draft-ietf-httpapi-ratelimit-headers). */
  policy: string;
  /** What is counted, for the 429's detail: `with this API key`. */
  per: string;
  log: Logger;
}

/**
 * `count/window` per key, counted in Redis across every node (one atomic script per request,
 * rate-limiter-flexible's fixed window). Every answer carries `RateLimit-Policy` and `RateLimit`;
 * over the limit, a 429 problem with `Retry-After`. With Redis unreachable or hung it lets
 * requests through and logs: an outage must not turn into 429s, nor hold requests.
 */
export class RequestLimiter {
  private readonly limiter: RateLimiterRedis;
  private readonly policy: string;
  private lastOutageLog = 0;
  private bypassUntil = 0;

  constructor(private readonly options: RateLimiterOptions) {
    const { limit } = options;
    this.limiter = new RateLimiterRedis({
      storeClient: options.redis,
      keyPrefix: options.keyPrefix,
      points: limit.points,
      duration: limit.windowSeconds,
      rejectIfRedisNotReady: true,
    });
    this.policy = `"${options.policy}";q=${limit.points};w=${limit.windowSeconds}`;
  }

  /** Counts one request of `key`: sets the headers, or throws the 429. */
  async consume(ctx: AppContext, key: string): Promise<void> {
    if (Date.now() < this.bypassUntil) return;
    const { limit, policy, per } = this.options;
    let state: RateLimiterRes;
    try {
      state = await this.limiter.consume(key);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        this.bypassUntil = Date.now() + OUTAGE_BYPASS_MS;
        if (Date.now() - this.lastOutageLog > OUTAGE_LOG_INTERVAL_MS) {
          this.lastOutageLog = Date.now();
          this.options.log.warn(
            { err: (err as Error).message, policy },
            'rate limiter unavailable; letting requests through',
          );
        }
        return;
      }
      const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new ProblemError(
        problems.tooManyRequests(
          `More than ${limit.points} requests in ${limit.windowSeconds} s ${per}; retry after ${seconds} s`,
        ),
        {
          'Retry-After': String(seconds),
          'RateLimit-Policy': this.policy,
          RateLimit: `"${policy}";r=0;t=${seconds}`,
        },
      );
    }
    ctx.set('RateLimit-Policy', this.policy);
    ctx.set('RateLimit', `"${policy}";r=${state.remainingPoints};t=${Math.ceil(state.msBeforeNext / 1000)}`);
  }
}

/**
 * `RATE_LIMIT` (e.g. `20/1s`): each API key may make that many requests per window, across every
 * node. Runs after authentication, so the 401 path (slowed by its own delay) is not counted.
 * Without `RATE_LIMIT`, nothing is limited and no header is added.
 */
export function rateLimitPerKey(limit: RateLimit | undefined, redis: RedisClient, prefix: string, log: Logger) {
  if (!limit) return (_ctx: AppContext, next: Next) => next();
  const limiter = new RequestLimiter({
    limit,
    redis,
    keyPrefix: `${prefix}:ratelimit`,
    policy: 'per-key',
    per: 'with this API key',
    log,
  });
  return async function rateLimitMiddleware(ctx: AppContext, next: Next): Promise<void> {
    await limiter.consume(ctx, sessionOf(ctx)._id);
    await next();
  };
}
