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
  | { kind: 'outstanding' };

/** The record of one key in Redis: the request's fingerprint, and its sealed answer once there is one. */
interface IdempotencyRecord {
  /** sha256 of method, path and body. */
  f: string;
  /** While processing: the owner's random token (so that only it releases the key). */
  t?: string;
  /** The answer, sealed with a key derived from the caller's Idempotency-Key. */
  r?: string;
}

/** SET NX the processing record; when the key exists, its record. One round trip. */
const BEGIN_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
return redis.call('GET', KEYS[1])`;

/** DEL only while the processing record is still the caller's. */
const RELEASE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current and cjson.decode(current).t == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export interface IdempotencyKeyRef {
  /** Whose key it is: a session id, or `admin`. Another caller's same key is another key. */
  scope: string;
  /** The Idempotency-Key header as sent. */
  key: string;
}

/**
 * Idempotency records in Redis, shared by every API node. Neither the Idempotency-Key nor the
 * answer is stored in the clear: the Redis key is a hash of scope and key, and the kept answer
 * (which may carry an API key or order data) is sealed with AES-256-GCM under a key derived from
 * the Idempotency-Key, so only a caller presenting it can read it back.
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
    const existing = (await this.redis.eval(BEGIN_SCRIPT, 1, this.redisKey(ref), JSON.stringify(processing), this.lockMs)) as string | null;
    if (existing === null) return { kind: 'first', token };
    const record = JSON.parse(existing) as IdempotencyRecord;
    if (record.f !== fingerprint) return { kind: 'mismatch' };
    if (record.r === undefined) return { kind: 'outstanding' };
    return { kind: 'replay', response: JSON.parse(unseal(ref, record.r)) as KeptResponse };
  }

  /** Keeps the final answer for `ttlMs`. */
  async complete(ref: IdempotencyKeyRef, fingerprint: string, response: KeptResponse): Promise<void> {
    const record: IdempotencyRecord = { f: fingerprint, r: seal(ref, JSON.stringify(response)) };
    await this.redis.set(this.redisKey(ref), JSON.stringify(record), 'PX', this.ttlMs);
  }

  /** Frees the key (the answer said nothing was done): a retry does the work. */
  async release(ref: IdempotencyKeyRef, token: string): Promise<void> {
    await this.redis.eval(RELEASE_SCRIPT, 1, this.redisKey(ref), token);
  }

  private redisKey(ref: IdempotencyKeyRef): string {
    return `${this.prefix}:idem:${createHash('sha256').update(`${ref.scope}\n${ref.key}`).digest('hex')}`;
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
