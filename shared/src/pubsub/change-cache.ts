import { LRUCache } from 'lru-cache';

/**
 * Documents found are kept at most this long even when nothing says they changed: a safety net
 * (a node of an older release that changes one without telling: a worker closing a session, an
 * API node changing a location's threshold), not the rule.
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

export interface ChangeCacheOptions {
  feed: ChangeFeed;
  /** Where the changes are published: `sessionsChannel` (sessions, operators) or `locationsChannel`. */
  channel: string;
  /** Documents kept at most (SESSION_CACHE_SIZE). */
  max: number;
}

/**
 * The id a change message names: `{ sessionId }`, `{ operatorId }`
 * (session-changes.ts) or `{ locationId }` (location-changes.ts).
 */
function changedId(message: string): string | undefined {
  try {
    const change = JSON.parse(message) as { sessionId?: unknown; operatorId?: unknown; locationId?: unknown };
    const id = change.sessionId ?? change.operatorId ?? change.locationId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Documents by a key (sessions and operators by the hash of the secret that opens them, a
 * location's settings by its id), never answering for one that changed:
 * - a change is published on the deployment's change channel before it is answered; every node
 *   drops that document's entries when it arrives;
 * - a document read while a change was arriving is used for its request but not kept;
 * - while the node's subscriber connection is down, or has not confirmed it is current within
 *   CACHE_LEASE_MS, the cache is neither read nor filled (every request reads MongoDB), and a lost
 *   connection empties it: changes published meanwhile never reach this node.
 */
export class ChangeCache<T extends { _id: string }> {
  private readonly cached: LRUCache<string, T>;
  /** The keys cached for each document (one; a session or operator has more during a key rotation). */
  private readonly keysOf = new Map<string, Set<string>>();
  /** Moves on with every change heard of and every lost connection: a read spanning one is not kept. */
  private generation = 0;
  /** True once the change channel is subscribed (and until stop). */
  private listening = false;
  private readonly onMessage = (message: string) => this.onChange(message);
  private readonly onLost = () => this.dropAll();

  constructor(private readonly options: ChangeCacheOptions) {
    this.cached = new LRUCache<string, T>({
      max: options.max,
      ttl: CACHED_TTL_MS,
      // lru-cache's default (1) arms a 1 ms timer at each look: a wake-up per request
      ttlResolution: 0,
      dispose: (doc, key) => this.unindex(doc._id, key),
    });
  }

  /** Listens to changes; until it has, nothing is cached. May be called again after it failed. */
  async start(): Promise<void> {
    this.options.feed.on('lost', this.onLost);
    try {
      await this.options.feed.subscribe(this.options.channel, this.onMessage);
    } catch (err) {
      this.options.feed.off('lost', this.onLost);
      throw err;
    }
    this.listening = true;
  }

  async stop(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    this.dropAll();
    this.options.feed.off('lost', this.onLost);
    await this.options.feed.unsubscribe(this.options.channel, this.onMessage);
  }

  /** The document cached for the hash, when the cache may answer now. */
  get(key: string): T | undefined {
    return this.usable() ? this.cached.get(key) : undefined;
  }

  /**
   * Call before a read: the returned function keeps what the read found, unless a change
   * arrived meanwhile or the cache could not answer at either end.
   */
  beginRead(): (key: string, doc: T) => void {
    const generation = this.generation;
    const usable = this.usable();
    return (key, doc) => {
      if (usable && generation === this.generation && this.usable()) this.keep(key, doc);
    };
  }

  private usable(): boolean {
    return this.listening && this.options.feed.confirmedWithin(CACHE_LEASE_MS);
  }

  private keep(key: string, doc: T): void {
    this.cached.set(key, doc);
    let keys = this.keysOf.get(doc._id);
    if (!keys) this.keysOf.set(doc._id, (keys = new Set()));
    keys.add(key);
  }

  private unindex(id: string, key: string): void {
    const keys = this.keysOf.get(id);
    if (keys?.delete(key) && keys.size === 0) this.keysOf.delete(id);
  }

  /**
   * A document changed (closed, deleted, its key rotated, its settings):
   * its entries go, and reads in flight are not kept.
   */
  private onChange(message: string): void {
    this.generation += 1;
    const id = changedId(message);
    // Unreadable: which document changed is unknown, so none is trusted.
    if (id === undefined) return this.dropAll();
    for (const key of [...(this.keysOf.get(id) ?? [])]) this.cached.delete(key);
  }

  private dropAll(): void {
    this.generation += 1;
    this.cached.clear();
    this.keysOf.clear();
  }
}
