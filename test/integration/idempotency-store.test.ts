/**
 * IdempotencyStore, the Idempotency-Key records, on a real Redis: the first claim, a repeat while
 * it is outstanding, the sealed answer replayed only to the same key, a different request under
 * the key, a release that only its owner makes, and each scope's quota.
 */
import Redis from 'ioredis';
import { IdempotencyStore, type IdempotencyKeyRef } from '@pos/api/idempotency/idempotency-store';

describe('IdempotencyStore', () => {
  const prefix = `idempotency-store-${process.pid}`;
  let redis: Redis;
  let store: IdempotencyStore;
  const ref = (key: string, scope = 'session-1', maxRecords = 10): IdempotencyKeyRef => ({ scope, key, maxRecords });
  const answer = { status: 201, contentType: 'application/json', body: '{"apiKey":"secret-key"}' };

  beforeAll(() => {
    redis = new Redis(process.env.TEST_REDIS_URL!);
    store = new IdempotencyStore(redis, prefix, 60_000, 5_000);
  });
  afterAll(() => redis.disconnect());

  it('claims a key once; a repeat is outstanding until the answer is kept, then replays it', async () => {
    const first = await store.begin(ref('k1'), 'fingerprint');
    expect(first.kind).toBe('first');
    expect(await store.begin(ref('k1'), 'fingerprint')).toEqual({ kind: 'outstanding' });
    await store.complete(ref('k1'), 'fingerprint', answer);
    expect(await store.begin(ref('k1'), 'fingerprint')).toEqual({ kind: 'replay', response: answer });
  });

  it('refuses another request under the same key, and keeps scopes apart', async () => {
    await store.begin(ref('k2'), 'one');
    expect(await store.begin(ref('k2'), 'other')).toEqual({ kind: 'mismatch' });
    expect((await store.begin(ref('k2', 'session-2'), 'other')).kind).toBe('first');
  });

  it('keeps neither the key nor the answer in the clear', async () => {
    await store.begin(ref('visible-key'), 'f');
    await store.complete(ref('visible-key'), 'f', answer);
    const keys = await redis.keys(`${prefix}:*`);
    expect(keys.join(' ')).not.toContain('visible-key');
    const values = await Promise.all(keys.filter((key) => !key.endsWith('}')).map((key) => redis.get(key)));
    expect(values.join(' ')).not.toContain('secret-key');
  });

  it('is released by its owner alone, and then claimed afresh', async () => {
    const first = await store.begin(ref('k3'), 'f');
    if (first.kind !== 'first') throw new Error('expected the first claim');
    await store.release(ref('k3'), 'not-the-owner');
    expect(await store.begin(ref('k3'), 'f')).toEqual({ kind: 'outstanding' });
    await store.release(ref('k3'), first.token);
    expect((await store.begin(ref('k3'), 'f')).kind).toBe('first');
  });

  it('holds a scope to its quota of records, telling how long until the oldest expires; a release frees a place', async () => {
    const scope = 'quota-scope';
    const claims = [];
    for (let i = 0; i < 3; i++) claims.push(await store.begin(ref(`q${i}`, scope, 3), 'f'));
    const full = await store.begin(ref('q3', scope, 3), 'f');
    expect(full.kind).toBe('full');
    expect(full.kind === 'full' && full.retryAfterMs).toBeGreaterThan(4_000);
    expect(full.kind === 'full' && full.retryAfterMs).toBeLessThanOrEqual(5_000);
    const first = claims[0]!;
    if (first.kind !== 'first') throw new Error('expected a claim');
    await store.release(ref('q0', scope, 3), first.token);
    expect((await store.begin(ref('q3', scope, 3), 'f')).kind).toBe('first');
  });
});
