import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { collections } from './mongo';
import { asString } from './query-values';

export interface LocationDoc {
  _id: string;
  name: string;
  failureThreshold: number;
  /** The last order and command numbers handed out; the two per-location sequences. */
  orderSeq: number;
  commandSeq: number;
  createdAt: Date;
}

export interface LocationView {
  id: string;
  name: string;
  failureThreshold: number;
}

export function toLocationView(doc: LocationDoc): LocationView {
  return { id: doc._id, name: doc.name, failureThreshold: doc.failureThreshold };
}

export class LocationsRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).locations;
  }

  async create(name: string, failureThreshold: number, now: Date): Promise<LocationDoc> {
    const doc: LocationDoc = { _id: randomUUID(), name, failureThreshold, orderSeq: 0, commandSeq: 0, createdAt: now };
    await this.c.insertOne(doc);
    return doc;
  }

  find(id: string): Promise<LocationDoc | null> {
    return this.c.findOne({ _id: asString(id, 'locationId') });
  }

  /** Hands out the next number of a sequence; a number is never reused, even if its insert fails. */
  async nextNumber(id: string, sequence: 'orderSeq' | 'commandSeq'): Promise<number | null> {
    const doc = await this.c.findOneAndUpdate({ _id: asString(id, 'locationId') }, { $inc: { [sequence]: 1 } }, { returnDocument: 'after' });
    return doc ? doc[sequence] : null;
  }
}
