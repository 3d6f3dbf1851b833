import { LRUCache } from 'lru-cache';
import { hashApiKey } from '@pos/shared/auth/keys';
import type { SessionDoc, SessionsRepo } from '@pos/shared/store/sessions';

/** Every key this service issues has this shape (generateApiKey); nothing else is looked up. */
const KEY_SHAPE = /^pos_[A-Za-z0-9_-]{43}$/;

/**
 * Key hashes that matched no session, or a closed one, are answered from memory for this long.
 * Neither can become valid (a key is stored before it is shown; a closed session stays
 * closed), so the bound on time only keeps the entries fresh, and the one on count the memory.
 */
const REFUSED_TTL_MS = 60_000;
const REFUSED_MAX = 10_000;

/**
 * From an api_key to its session, for the api_key authentication of this node: malformed keys
 * and recently refused key hashes cost no MongoDB read, so a flood of bad keys does not become
 * a flood of reads. It also bounds the rejections the node holds in their 401 delay at once.
 */
export class SessionLookup {
  private readonly refused = new LRUCache<string, true>({ max: REFUSED_MAX, ttl: REFUSED_TTL_MS });
  private rejecting = 0;

  constructor(
    private readonly sessions: Pick<SessionsRepo, 'findByKeyHash'>,
    private readonly maxRejections: number,
  ) {}

  /**
   * The key's hash, and its session as stored, or null when the key names none (or a closed
   * one). Whether the key still opens it (a rotated key's grace) is for the session rules.
   */
  async find(key: string): Promise<{ keyHash: string; session: SessionDoc | null }> {
    if (!KEY_SHAPE.test(key)) return { keyHash: '', session: null };
    const keyHash = hashApiKey(key);
    if (this.refused.has(keyHash)) return { keyHash, session: null };
    const session = await this.sessions.findByKeyHash(keyHash);
    if (!session || session.closedAt) this.refused.set(keyHash, true);
    return { keyHash, session };
  }

  /**
   * Takes a place for one rejection in its delay; the returned function gives it back (once).
   * Undefined when the node already delays `maxRejections` rejections.
   */
  holdRejection(): (() => void) | undefined {
    if (this.rejecting >= this.maxRejections) return undefined;
    this.rejecting += 1;
    let held = true;
    return () => {
      if (held) this.rejecting -= 1;
      held = false;
    };
  }

  /** Rejections in their delay on this node now. */
  get rejectionsInFlight(): number {
    return this.rejecting;
  }
}
