import type { Counter } from 'prom-client';
import { API_KEY_SHAPE, hashApiKey, KeyForm, keyFormOf } from '@pos/shared/auth/keys';
import { judgeSession, SessionVerdict } from '@pos/shared/auth/session-rules';
import type { SessionDoc, SessionType } from '@pos/shared/store/documents';
import type { SessionsRepo } from '@pos/shared/store/sessions';
import type { ChangeCacheOptions } from '@pos/shared/pubsub/change-cache';
import { HashLookup } from './hash-lookup';

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

/** The session cache: on the deployment's change channel (`sessionsChannel`), SESSION_CACHE_SIZE sessions. */
export type SessionCacheOptions = ChangeCacheOptions;

/**
 * From an api_key to its session, for the api_key authentication of this node: keys that do not
 * carry the MAC of one of the deployment's secrets (and, unless API_KEY_ACCEPT_UNSIGNED, keys of
 * the unsigned shape issued before) and recently refused key hashes cost no MongoDB read, so a
 * flood of bad keys, repeated or all different, does not become a flood of reads. It also bounds
 * the rejections the node holds in their 401 delay at once.
 *
 * With a cache (auth/change-cache.ts), sessions found are kept by key hash, so that a register's
 * requests cost no session read. The session is still judged on every request (session-rules:
 * closed, type, expiry against the clock), and the cache never answers for a session that
 * changed: a close (or any change of a session) is published on the deployment's session
 * channel by the worker before the close answers, and drops the session on every node.
 */
export class SessionLookup {
  private readonly byHash: HashLookup<SessionDoc>;
  private rejecting = 0;

  constructor(
    sessions: Pick<SessionsRepo, 'findByKeyHash'>,
    private readonly keys: KeyPolicy,
    private readonly maxRejections: number,
    cache?: SessionCacheOptions,
  ) {
    // A closed session never opens again: its key is refused from memory, like an unknown one.
    this.byHash = new HashLookup(
      (hash) => sessions.findByKeyHash(hash),
      (session) => !session.closedAt,
      cache,
    );
  }

  /** Listens to session changes; until it has, nothing is cached. */
  start(): Promise<void> {
    return this.byHash.start();
  }

  stop(): Promise<void> {
    return this.byHash.stop();
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
    const keyHash = hashApiKey(key);
    // A key whose session this node holds passed the checks below when it was read, under the
    // same secrets (they are the process's): a register's requests skip its MAC.
    const held = this.byHash.fromCache(keyHash);
    if (held) return { keyHash, session: held, form: API_KEY_SHAPE.test(key) ? 'signed' : 'unsigned' };
    const form = keyFormOf(key, this.keys.secrets);
    // Never issued by this deployment (or no longer accepted unsigned): not looked up.
    if (form === 'made-up' || (form === 'unsigned' && !this.keys.acceptUnsigned))
      return { keyHash: '', session: null, form };
    return { keyHash, session: await this.byHash.find(keyHash), form };
  }

  /** The key's session when this node holds it in memory (no read, no MAC), with the key's hash; else undefined. */
  fromCache(key: string): { keyHash: string; session: SessionDoc } | undefined {
    const keyHash = hashApiKey(key);
    const session = this.byHash.fromCache(keyHash);
    return session ? { keyHash, session } : undefined;
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
