import { hashApiKey, keyFormOf } from '@pos/shared/auth/keys';
import type { OperatorDoc, OperatorsRepo } from '@pos/shared/store/operators';
import type { ChangeCacheOptions } from '@pos/shared/pubsub/change-cache';
import { HashLookup } from './hash-lookup';

/**
 * From an operator's bearer token to its account. Tokens have the shape and MAC of API keys
 * (auth/keys.ts): one that does not carry the MAC of one of the deployment's secrets, or whose
 * hash was refused lately, costs no MongoDB read. Accounts found are kept by token hash in a
 * ChangeCache on the session channel: a deleted operator, a rotated token, a changed role or
 * scope is published there before it is answered, so it holds on every node at once.
 */
export class OperatorLookup {
  private readonly byHash: HashLookup<OperatorDoc>;

  constructor(
    operators: Pick<OperatorsRepo, 'findByTokenHash'>,
    /** API_KEY_SECRET, then API_KEY_SECRET_PREVIOUS. */
    private readonly secrets: readonly string[],
    cache?: ChangeCacheOptions,
  ) {
    this.byHash = new HashLookup(
      (hash) => operators.findByTokenHash(hash),
      () => true,
      cache,
    );
  }

  start(): Promise<void> {
    return this.byHash.start();
  }

  stop(): Promise<void> {
    return this.byHash.stop();
  }

  /** The operator the token opens; null for any other token. */
  async find(token: string): Promise<OperatorDoc | null> {
    if (keyFormOf(token, this.secrets) !== 'signed') return null;
    return this.byHash.find(hashApiKey(token));
  }
}
