import { LRUCache } from 'lru-cache';
import { ChangeCache, type ChangeCacheOptions } from '@pos/shared/pubsub/change-cache';

/**
 * Hashes that matched nothing, or a document that can no longer open (a closed session), are
 * answered from memory for this long. Neither can become valid (a secret is stored before it is
 * shown; a closed session stays closed; a deleted operator stays deleted), so the bound on time
 * only keeps the entries fresh, and the one on count the memory.
 */
const REFUSED_TTL_MS = 60_000;
const REFUSED_MAX = 10_000;

/**
 * Documents by the hash of the secret that opens them (a register's API key, an operator's
 * token): a hash refused lately costs no MongoDB read, and, with a cache, documents found are
 * kept in a ChangeCache, which never answers for one that changed.
 */
export class HashLookup<T extends { _id: string }> {
  // ttlResolution 0: lru-cache's default (1) arms a 1 ms timer at each look: a wake-up per request
  private readonly refused = new LRUCache<string, true>({ max: REFUSED_MAX, ttl: REFUSED_TTL_MS, ttlResolution: 0 });
  private readonly cached: ChangeCache<T> | undefined;

  constructor(
    private readonly read: (hash: string) => Promise<T | null>,
    /** Whether a document found can open anything; one that cannot is refused like an unknown hash. */
    private readonly opens: (doc: T) => boolean,
    cache?: ChangeCacheOptions,
  ) {
    if (cache && cache.max > 0) this.cached = new ChangeCache<T>(cache);
  }

  /** Listens to changes; until it has, nothing is cached. */
  async start(): Promise<void> {
    await this.cached?.start();
  }

  async stop(): Promise<void> {
    await this.cached?.stop();
  }

  /** The document this node holds for the hash, without a read; undefined when it holds none. */
  fromCache(hash: string): T | undefined {
    return this.cached?.get(hash);
  }

  /** The document as stored (even one that cannot open, on its first read), or null. */
  async find(hash: string): Promise<T | null> {
    if (this.refused.has(hash)) return null;
    const hit = this.cached?.get(hash);
    if (hit) return hit;
    const keep = this.cached?.beginRead();
    const doc = await this.read(hash);
    if (!doc || !this.opens(doc)) this.refused.set(hash, true);
    else keep?.(hash, doc);
    return doc;
  }
}
