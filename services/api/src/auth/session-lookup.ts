import { LRUCache } from 'lru-cache';
import type { Counter } from 'prom-client';
import { hashApiKey, KeyForm, keyFormOf } from '@pos/shared/auth/keys';
import { judgeSession, SessionVerdict } from '@pos/shared/auth/session-rules';
import type { SessionDoc, SessionType } from '@pos/shared/store/documents';
import type { SessionsRepo } from '@pos/shared/store/sessions';

/**
 * Key hashes that matched no session, or a closed one, are answered from memory for this long.
 * Neither can become valid (a key is stored before it is shown; a closed session stays
 * closed), so the bound on time only keeps the entries fresh, and the one on count the memory.
 */
const REFUSED_TTL_MS = 60_000;
const REFUSED_MAX = 10_000;

/**
 * Sessions found are kept at most this long even when nothing says they changed: a safety net
 * (a worker of an older release that closes sessions without telling the nodes), not the rule.
 */
const CACHED_TTL_MS = 60_000;

/**
 * The cache is used only while every change published up to this long ago is known to have
 * reached this node (its subscriber answered a PING sent since): a subscriber connection that
 * died silently stops the cache within this bound.
 */
export const CACHE_LEASE_MS = 3_000;

/** What the cache needs of the node's subscriber connection (ChannelSubscriber). */
export interface ChangeFeed {
  subscribe(channel: string, handler: (message: string) => void): Promise<void>;
  unsubscribe(channel: string, handler: (message: string) => void): Promise<void>;
  confirmedWithin(ms: number): boolean;
  on(event: 'lost' | 'resubscribed', listener: () => void): unknown;
  off(event: 'lost' | 'resubscribed', listener: () => void): unknown;
}

/** Which keys are looked up at all. */
export interface KeyPolicy {
  /** API_KEY_SECRET, then API_KEY_SECRET_PREVIOUS: a key signed under one of them is looked up. */
  secrets: readonly string[];
  /** API_KEY_ACCEPT_UNSIGNED: keys of the shape issued before keys were signed are looked up too. */
  acceptUnsigned: boolean;
  /** Requests made with unsigned keys, by outcome (`accepted`, `rejected`), whether they are looked up or not. */
  unsignedRequests?: Counter<'outcome'>;
}

/** A key's lookup: its hash (empty when not looked up), its session as stored, and its form. */
export interface FoundKey {
  keyHash: string;
  session: SessionDoc | null;
  form: KeyForm;
}

export interface SessionCacheOptions {
  feed: ChangeFeed;
  /** The deployment's session-change channel (`sessionsChannel`). */
  channel: string;
  /** Sessions kept at most (SESSION_CACHE_SIZE). */
  max: number;
}

/**
 * From an api_key to its session, for the api_key authentication of this node: keys that do not
 * carry the MAC of one of the deployment's secrets (and, unless API_KEY_ACCEPT_UNSIGNED, keys of
 * the unsigned shape issued before) and recently refused key hashes cost no MongoDB read, so a
 * flood of bad keys, repeated or all different, does not become a flood of reads. It also bounds
 * the rejections the node holds in their 401 delay at once.
 *
 * With a cache, sessions found are kept by key hash, so that a register's requests cost no
 * session read. The session is still judged on every request (session-rules: closed, type,
 * expiry against the clock), and the cache never answers for a session that changed:
 * - a close (or any change of a session) is published on the deployment's session channel by the
 *   worker before the close answers; every node drops that session's entries when it arrives;
 * - a session read while a change was arriving is used for its request but not kept;
 * - while the node's subscriber connection is down, or has not confirmed it is current within
 *   CACHE_LEASE_MS, the cache is neither read nor filled (every request reads MongoDB), and a lost
 *   connection empties it: changes published meanwhile never reach this node.
 */
export class SessionLookup {
  private readonly refused = new LRUCache<string, true>({ max: REFUSED_MAX, ttl: REFUSED_TTL_MS });
  private readonly cached: LRUCache<string, SessionDoc> | undefined;
  /** The key hashes cached for each session (a session has one key; more during a rotation). */
  private readonly keysOf = new Map<string, Set<string>>();
  /** Moves on with every change heard of and every lost connection: a read spanning one is not kept. */
  private generation = 0;
  private rejecting = 0;
  /** True once the change channel is subscribed (and until stop). */
  private listening = false;
  private readonly onMessage = (message: string) => this.onChange(message);
  private readonly onLost = () => this.dropAll();

  constructor(
    private readonly sessions: Pick<SessionsRepo, 'findByKeyHash'>,
    private readonly keys: KeyPolicy,
    private readonly maxRejections: number,
    private readonly cache?: SessionCacheOptions,
  ) {
    if (cache && cache.max > 0) {
      this.cached = new LRUCache<string, SessionDoc>({
        max: cache.max,
        ttl: CACHED_TTL_MS,
        dispose: (session, keyHash) => this.unindex(session._id, keyHash),
      });
    }
  }

  /** Listens to session changes; until it has, nothing is cached. */
  async start(): Promise<void> {
    if (!this.cache || !this.cached) return;
    this.cache.feed.on('lost', this.onLost);
    await this.cache.feed.subscribe(this.cache.channel, this.onMessage);
    this.listening = true;
  }

  async stop(): Promise<void> {
    if (!this.listening || !this.cache) return;
    this.listening = false;
    this.dropAll();
    this.cache.feed.off('lost', this.onLost);
    await this.cache.feed.unsubscribe(this.cache.channel, this.onMessage);
  }

  /**
   * The session rules' verdict on a key for a route of the given session type, with the key's
   * lookup; requests made with unsigned keys are counted by outcome.
   */
  async authenticate(key: string, type: SessionType, now: Date): Promise<FoundKey & { verdict: SessionVerdict }> {
    const found = await this.find(key);
    const verdict = judgeSession(found.session, found.keyHash, type, now);
    if (found.form === 'unsigned') this.keys.unsignedRequests?.inc({ outcome: verdict.ok ? 'accepted' : 'rejected' });
    return { ...found, verdict };
  }

  /**
   * The key's hash, and its session as stored, or null when the key names none (or a closed
   * one). Whether the key still opens it (a rotated key's grace) is for the session rules.
   */
  async find(key: string): Promise<FoundKey> {
    const form = keyFormOf(key, this.keys.secrets);
    // Never issued by this deployment (or no longer accepted unsigned): not looked up.
    if (form === 'made-up' || (form === 'unsigned' && !this.keys.acceptUnsigned)) return { keyHash: '', session: null, form };
    const keyHash = hashApiKey(key);
    if (this.refused.has(keyHash)) return { keyHash, session: null, form };
    const usable = this.cacheUsable();
    if (usable) {
      const hit = this.cached!.get(keyHash);
      if (hit) return { keyHash, session: hit, form };
    }
    const generation = this.generation;
    const session = await this.sessions.findByKeyHash(keyHash);
    if (!session || session.closedAt) this.refused.set(keyHash, true);
    else if (usable && generation === this.generation && this.cacheUsable()) this.keep(keyHash, session);
    return { keyHash, session, form };
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

  private cacheUsable(): boolean {
    return this.listening && this.cache!.feed.confirmedWithin(CACHE_LEASE_MS);
  }

  private keep(keyHash: string, session: SessionDoc): void {
    this.cached!.set(keyHash, session);
    let keys = this.keysOf.get(session._id);
    if (!keys) this.keysOf.set(session._id, (keys = new Set()));
    keys.add(keyHash);
  }

  private unindex(sessionId: string, keyHash: string): void {
    const keys = this.keysOf.get(sessionId);
    if (keys?.delete(keyHash) && keys.size === 0) this.keysOf.delete(sessionId);
  }

  /** A session changed (closed, its key rotated): its entries go, and reads in flight are not kept. */
  private onChange(message: string): void {
    this.generation += 1;
    let sessionId: unknown;
    try {
      sessionId = (JSON.parse(message) as { sessionId?: unknown }).sessionId;
    } catch {
      sessionId = undefined;
    }
    if (typeof sessionId !== 'string') {
      // Unreadable: which session changed is unknown, so none is trusted.
      this.dropAll();
      return;
    }
    for (const keyHash of [...(this.keysOf.get(sessionId) ?? [])]) this.cached?.delete(keyHash);
  }

  private dropAll(): void {
    this.generation += 1;
    this.cached?.clear();
    this.keysOf.clear();
  }
}
