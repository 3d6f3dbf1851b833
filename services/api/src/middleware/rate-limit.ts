import type { Next } from 'koa';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '@pos/shared/config';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { Logger } from '@pos/shared/log';
import type { RedisClient } from '@pos/shared/redis';
import { sessionOf, type AppContext } from '../context';

/** The policy's name in the RateLimit headers (draft-ietf-httpapi-ratelimit-headers). */
const POLICY = '"per-key"';
/** A Redis outage is logged at most this often, not once per request. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;
/**
 * After a count Redis failed (down, or not answering within REDIS_COMMAND_TIMEOUT), requests go
 * uncounted this long before Redis is asked again: a hung Redis costs one request that wait, not
 * every request. (rate-limiter-flexible's insuranceLimiter is asked only once the store call has
 * failed, so it would not spare the wait; and counting per node would turn an outage into 429s.)
 */
const OUTAGE_BYPASS_MS = 5_000;

/**
 * `RATE_LIMIT` (e.g. `20/1s`): each API key may make that many requests per window, counted
 * in Redis across every node (one atomic script per request, rate-limiter-flexible's fixed
 * window). Runs after authentication, so the 401 path (slowed by its own delay) is not counted.
 * Every answer carries `RateLimit-Policy` and `RateLimit`; over the limit, a 429 problem with
 * `Retry-After`. With Redis unreachable or hung it lets requests through and logs: an outage must
 * not turn into 429s, nor hold requests. Without `RATE_LIMIT`, nothing is limited and no header is added.
 */
export function rateLimitPerKey(limit: RateLimit | undefined, redis: RedisClient, prefix: string, log: Logger) {
  if (!limit) return (_ctx: AppContext, next: Next) => next();
  const limiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${prefix}:ratelimit`,
    points: limit.points,
    duration: limit.windowSeconds,
    rejectIfRedisNotReady: true,
  });
  const policy = `${POLICY};q=${limit.points};w=${limit.windowSeconds}`;
  let lastOutageLog = 0;
  let bypassUntil = 0;

  return async function rateLimitMiddleware(ctx: AppContext, next: Next): Promise<void> {
    if (Date.now() < bypassUntil) return next();
    let state: RateLimiterRes | undefined;
    try {
      state = await limiter.consume(sessionOf(ctx)._id);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        bypassUntil = Date.now() + OUTAGE_BYPASS_MS;
        if (Date.now() - lastOutageLog > OUTAGE_LOG_INTERVAL_MS) {
          lastOutageLog = Date.now();
          log.warn({ err: (err as Error).message }, 'rate limiter unavailable; letting requests through');
        }
        return next();
      }
      const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new ProblemError(problems.tooManyRequests(`More than ${limit.points} requests in ${limit.windowSeconds} s with this API key; retry after ${seconds} s`), {
        'Retry-After': String(seconds),
        'RateLimit-Policy': policy,
        RateLimit: `${POLICY};r=0;t=${seconds}`,
      });
    }
    ctx.set('RateLimit-Policy', policy);
    ctx.set('RateLimit', `${POLICY};r=${state.remainingPoints};t=${Math.ceil(state.msBeforeNext / 1000)}`);
    await next();
  };
}
