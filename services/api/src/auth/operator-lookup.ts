import { LRUCache } from 'lru-cache';
import { hashApiKey, keyFormOf } from '@pos/shared/auth/keys';
import type { OperatorDoc, OperatorsRepo } from '@pos/shared/store/operators';
import { ChangeCache, type ChangeCacheOptions } from './change-cache';

/** Token hashes that matched no operator: none can come to (a token is stored before it is shown; a deleted one stays deleted). */
const REFUSED_TTL_MS = 60_000;
const REFUSED_MAX = 10_000;

/**
 * From an operator's bearer token to its account. Tokens have the shape and MAC of API keys
 * (auth/keys.ts): one that does not carry the MAC of one of the deployment's secrets, or whose
 * hash was refused lately, costs no MongoDB read. Accounts found are kept by token hash in a
 * ChangeCache on the session channel: a deleted operator, a rotated token, a changed role or
 * scope is published there before it is answered, so it holds on every node at once.
 */
export class OperatorLookup {
  private readonly refused = new LRUCache<string, true>({ max: REFUSED_MAX, ttl: REFUSED_TTL_MS });
  private readonly cached: ChangeCache<OperatorDoc> | undefined;

  constructor(
    private readonly operators: Pick<OperatorsRepo, 'findByTokenHash'>,
    /** API_KEY_SECRET, then API_KEY_SECRET_PREVIOUS. */
    private readonly secrets: readonly string[],
    cache?: ChangeCacheOptions,
  ) {
    if (cache && cache.max > 0) this.cached = new ChangeCache<OperatorDoc>(cache);
  }

  async start(): Promise<void> {
    await this.cached?.start();
  }

  async stop(): Promise<void> {
    await this.cached?.stop();
  }

  /** The operator the token opens; null for any other token. */
  async find(token: string): Promise<OperatorDoc | null> {
    if (keyFormOf(token, this.secrets) !== 'signed') return null;
    const tokenHash = hashApiKey(token);
    if (this.refused.has(tokenHash)) return null;
    const hit = this.cached?.get(tokenHash);
    if (hit) return hit;
    const keep = this.cached?.beginRead();
    const operator = await this.operators.findByTokenHash(tokenHash);
    if (!operator) this.refused.set(tokenHash, true);
    else keep?.(tokenHash, operator);
    return operator;
  }
}
