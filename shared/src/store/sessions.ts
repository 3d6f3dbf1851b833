import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { collections } from './mongo';
import { asString } from './query-values';

export type SessionType = 'SERVICE' | 'CUSTOMER';

export interface SessionDoc {
  _id: string;
  type: SessionType;
  locationId: string;
  /** SHA-256 of the API key; the key itself is never stored. */
  keyHash: string;
  deviceId?: string;
  userNumber?: number;
  tableNumber?: number;
  createdAt: Date;
  expiresAt?: Date;
  closedAt?: Date;
}

export type NewSession = Omit<SessionDoc, '_id' | 'createdAt' | 'closedAt'>;

export interface SessionView {
  sessionId: string;
  type: SessionType;
  locationId: string;
  deviceId?: string;
  userNumber?: number;
  tableNumber?: number;
  createdAt: string;
  expiresAt?: string;
}

export function toSessionView(doc: SessionDoc): SessionView {
  const view: SessionView = {
    sessionId: doc._id,
    type: doc.type,
    locationId: doc.locationId,
    createdAt: doc.createdAt.toISOString(),
  };
  if (doc.deviceId !== undefined) view.deviceId = doc.deviceId;
  if (doc.userNumber !== undefined) view.userNumber = doc.userNumber;
  if (doc.tableNumber !== undefined) view.tableNumber = doc.tableNumber;
  if (doc.expiresAt) view.expiresAt = doc.expiresAt.toISOString();
  return view;
}

export class SessionsRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).sessions;
  }

  async create(session: NewSession, now: Date): Promise<SessionDoc> {
    const doc: SessionDoc = { _id: randomUUID(), createdAt: now, ...session };
    await this.c.insertOne(doc);
    return doc;
  }

  findByKeyHash(keyHash: string): Promise<SessionDoc | null> {
    return this.c.findOne({ keyHash: asString(keyHash, 'keyHash') });
  }

  find(id: string): Promise<SessionDoc | null> {
    return this.c.findOne({ _id: asString(id, 'sessionId') });
  }

  /** Marks the session closed; true only for the call that closed it. */
  async close(id: string, now: Date): Promise<boolean> {
    const result = await this.c.updateOne({ _id: asString(id, 'sessionId'), closedAt: { $exists: false } }, { $set: { closedAt: now } });
    return result.modifiedCount === 1;
  }
}
