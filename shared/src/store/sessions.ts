import type { Db, Filter } from 'mongodb';
import type { SessionView } from '../schemas/responses';
import type { NewSession, SessionDoc, SessionType } from './documents';
import { newId } from './ids';
import { collections } from './mongo';
import type { Page } from './page';
import { asString } from './query-values';

export type { NewSession, SessionDoc, SessionType, SessionView };

/** A session as its key rotation left it: the rotation's fields set. */
export type RotatedSessionDoc = SessionDoc &
  Required<Pick<SessionDoc, 'previousKeyHash' | 'previousKeyExpiresAt' | 'keyRotatedAt'>>;

export class SessionsRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).sessions;
  }

  async create(session: NewSession, now: Date): Promise<SessionDoc> {
    const doc: SessionDoc = { _id: newId(), createdAt: now, ...session };
    await this.c.insertOne(doc);
    return doc;
  }

  /**
   * The session a key opens, by the key's hash: its current key, or the one its last rotation
   * replaced (whether that one still works is for auth/session-rules to judge). One query, each
   * branch served by its own index.
   */
  findByKeyHash(keyHash: string): Promise<SessionDoc | null> {
    const hash = asString(keyHash, 'keyHash');
    return this.c.findOne({ $or: [{ keyHash: hash }, { previousKeyHash: hash }] });
  }

  /** A location's sessions by id (creation order), one page; index `{locationId, _id}`. */
  listByLocation(locationId: string, page: Page<string>): Promise<SessionDoc[]> {
    const filter: Filter<SessionDoc> = { locationId: asString(locationId, 'locationId') };
    if (page.after !== undefined) filter._id = { $gt: page.after };
    return this.c.find(filter).sort({ _id: 1 }).limit(page.limit).toArray();
  }

  /**
   * Replaces the key of an open session: the new hash becomes current, the one it replaces keeps
   * working until `previousKeyExpiresAt`. Conditional on the key read, so of two concurrent
   * rotations one wins; null when the session was closed or rotated since `session` was read.
   */
  async rotateKey(session: SessionDoc, keyHash: string, now: Date, graceMs: number): Promise<RotatedSessionDoc | null> {
    const set = {
      keyHash,
      previousKeyHash: session.keyHash,
      previousKeyExpiresAt: new Date(now.getTime() + graceMs),
      keyRotatedAt: now,
    };
    const { modifiedCount } = await this.c.updateOne(
      { _id: session._id, keyHash: session.keyHash, closedAt: { $exists: false } },
      { $set: set },
    );
    return modifiedCount === 1 ? { ...session, ...set } : null;
  }

  find(id: string): Promise<SessionDoc | null> {
    return this.c.findOne({ _id: asString(id, 'sessionId') });
  }

  /** Whether the session exists and is not closed (expiry aside): one read of its `closedAt` alone. */
  async isOpen(id: string): Promise<boolean> {
    const doc = await this.c.findOne({ _id: asString(id, 'sessionId') }, { projection: { _id: 0, closedAt: 1 } });
    return doc !== null && doc.closedAt === undefined;
  }

  /** Those of the sessions that exist, in one command. */
  findMany(ids: string[]): Promise<SessionDoc[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.c.find({ _id: { $in: ids.map((id) => asString(id, 'sessionId')) } }).toArray();
  }

  /** Marks the session closed; true only for the call that closed it. */
  async close(id: string, now: Date): Promise<boolean> {
    const result = await this.c.updateOne(
      { _id: asString(id, 'sessionId'), closedAt: { $exists: false } },
      { $set: { closedAt: now } },
    );
    return result.modifiedCount === 1;
  }
}
