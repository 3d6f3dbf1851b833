import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { RedisClient } from '@pos/shared/redis';

/** A kept answer: what a repeat of the request gets back. */
export interface KeptResponse {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** What `begin` found for a key. */
export type Begun =
  | { kind: 'first'; token: string }
  | { kind: 'replay'; response: KeptResponse }
  | { kind: 'mismatch' }
  | { kind: 'outstanding' }
  /** The scope holds its quota of records; the oldest expires in `retryAfterMs`. */
  | { kind: 'full'; retryAfterMs: number };

/** The record of one key in Redis: the request's fingerprint, and its sealed answer once there is one. */
interface IdempotencyRecord {
  /** sha256 of method, path and body. */
  f: string;
  /** While processing: the owner's random token (so that only it releases the key). */
  t?: string;
  /** The answer, sealed with a key derived from the caller's Idempotency-Key. */
  r?: string;
}

/*
 * Each scope's records are also members of a sorted set of the scope, scored by when each
 * expires (Redis's clock, TIME, so that every node counts alike): its size is the scope's
 * count, trimmed of the expired on every claim, and the set itself expires with its last
 * record. A record and its scope's set share a hash tag, so one script touches both on a Redis
 * Cluster too.
 */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** The set lives as long as its longest-lived record. */
const EXPIRE_SCOPE = `local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[2], last[2]) end`;

/**
 * The key's record if it exists; else, below the scope's quota (ARGV[3]), SET the processing
 * record and count it; at the quota, how long until the oldest record expires. One round trip.
 */
const BEGIN_SCRIPT = `
local existing = redis.call('GET', KEYS[1])
if existing then return {'found', existing} end
${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return {'full', tonumber(oldest[2]) - now}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[4])
${EXPIRE_SCOPE}
return {'first'}`;

/** The answer replaces the processing record, and its count lives as long. */
const COMPLETE_SCRIPT = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
${NOW}
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
${EXPIRE_SCOPE}
return 1`;

/** DEL (and uncount) only while the processing record is still the caller's. */
const RELEASE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current and cjson.decode(current).t == ARGV[1] then
  redis.call('ZREM', KEYS[2], ARGV[2])
  return redis.call('DEL', KEYS[1])
end
return 0`;

export interface IdempotencyKeyRef {
  /** Whose key it is: a session id, or `admin`. Another caller's same key is another key. */
  scope: string;
  /** Records the scope may hold at once (IDEMPOTENCY_MAX_RECORDS or _MAX_CUSTOMER_RECORDS). */
  maxRecords: number;
  /** The Idempotency-Key header as sent. */
  key: string;
}

/**
 * Idempotency records in Redis, shared by every API node. Neither the Idempotency-Key nor the
 * answer is stored in the clear: the Redis key is a hash of scope and key, and the kept answer
 * (which may carry an API key or order data) is sealed with AES-256-GCM under a key derived from
 * the Idempotency-Key, so only a caller presenting it can read it back. What one caller can make
 * Redis hold is bounded: at most `maxRecords` records per scope at once, counted atomically with
 * each claim.
 */
export class IdempotencyStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** How long the answer is kept. */
    private readonly ttlMs: number,
    /** How long a processing record holds the key: past it the first attempt is taken for dead. */
    private readonly lockMs: number,
  ) {}

  /** Claims the key for this request, or tells what it is already bound to. */
  async begin(ref: IdempotencyKeyRef, fingerprint: string): Promise<Begun> {
    const token = randomBytes(12).toString('base64url');
    const processing: IdempotencyRecord = { f: fingerprint, t: token };
    const keys = this.redisKeys(ref);
    const [found, value] = (await this.redis.eval(
      BEGIN_SCRIPT,
      2,
      keys.record,
      keys.scope,
      JSON.stringify(processing),
      this.lockMs,
      ref.maxRecords,
      keys.member,
    )) as [string, string | number | undefined];
    if (found === 'first') return { kind: 'first', token };
    if (found === 'full') return { kind: 'full', retryAfterMs: Number(value) };
    const record = JSON.parse(value as string) as IdempotencyRecord;
    if (record.f !== fingerprint) return { kind: 'mismatch' };
    if (record.r === undefined) return { kind: 'outstanding' };
    return { kind: 'replay', response: JSON.parse(unseal(ref, record.r)) as KeptResponse };
  }

  /** Keeps the final answer for `ttlMs`. */
  async complete(ref: IdempotencyKeyRef, fingerprint: string, response: KeptResponse): Promise<void> {
    const record: IdempotencyRecord = { f: fingerprint, r: seal(ref, JSON.stringify(response)) };
    const keys = this.redisKeys(ref);
    await this.redis.eval(COMPLETE_SCRIPT, 2, keys.record, keys.scope, JSON.stringify(record), this.ttlMs, keys.member);
  }

  /** Frees the key (the answer said nothing was done): a retry does the work. */
  async release(ref: IdempotencyKeyRef, token: string): Promise<void> {
    const keys = this.redisKeys(ref);
    await this.redis.eval(RELEASE_SCRIPT, 2, keys.record, keys.scope, token, keys.member);
  }

  /**
   * The record's key (a hash of scope and key, under the scope's hash tag), the key of the
   * scope's set of its records, and the record's member in that set.
   */
  private redisKeys(ref: IdempotencyKeyRef): { record: string; scope: string; member: string } {
    const tag = createHash('sha256').update(ref.scope).digest('hex').slice(0, 16);
    const hash = createHash('sha256').update(`${ref.scope}\n${ref.key}`).digest('hex');
    const scope = `${this.prefix}:idem:{${tag}}`;
    // 128 bits name a record among its scope's; a shorter member is a smaller set
    return { record: `${scope}:${hash}`, scope, member: hash.slice(0, 32) };
  }
}

function sealingKey(ref: IdempotencyKeyRef): Buffer {
  return Buffer.from(hkdfSync('sha256', ref.key, ref.scope, 'pos idempotent response', 32));
}

function seal(ref: IdempotencyKeyRef, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(ref), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function unseal(ref: IdempotencyKeyRef, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(ref), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
