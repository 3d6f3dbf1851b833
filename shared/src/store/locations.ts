import type { Db, Filter } from 'mongodb';
import type { LocationView } from '../schemas/responses';
import type { LocationDoc } from './documents';
import { newId } from './ids';
import { collections } from './mongo';
import type { Page } from './page';
import { asString } from './query-values';

export type { LocationDoc, LocationView };

/** What an admin may change of a location. */
export interface LocationChanges {
  name?: string;
  failureThreshold?: number;
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
    const doc: LocationDoc = { _id: newId(), name, failureThreshold, orderSeq: 0, commandSeq: 0, createdAt: now };
    await this.c.insertOne(doc);
    return doc;
  }

  find(id: string): Promise<LocationDoc | null> {
    return this.c.findOne({ _id: asString(id, 'locationId') });
  }

  /**
   * Locations by id (creation order), one page; served by the `_id` index. `within`: only these
   * (an operator's scope).
   */
  list(page: Page<string>, within?: readonly string[]): Promise<LocationDoc[]> {
    const ids: Filter<LocationDoc>['_id'] = {};
    if (page.after !== undefined) ids.$gt = asString(page.after, 'after');
    if (within) ids.$in = within.map((id) => asString(id, 'locationId'));
    const filter: Filter<LocationDoc> = Object.keys(ids).length === 0 ? {} : { _id: ids };
    return this.c.find(filter).sort({ _id: 1 }).limit(page.limit).toArray();
  }

  /** Applies the changes; the location as it is after them, or null when there is none. */
  update(id: string, changes: LocationChanges): Promise<LocationDoc | null> {
    return this.c.findOneAndUpdate({ _id: asString(id, 'locationId') }, { $set: changes }, { returnDocument: 'after' });
  }

  /** A location's failure threshold alone (the worker's read for each failure report). */
  async failureThreshold(id: string): Promise<number | undefined> {
    const doc = await this.c.findOne({ _id: asString(id, 'locationId') }, { projection: { failureThreshold: 1 } });
    return doc?.failureThreshold;
  }

  /** Hands out the next number of a sequence; a number is never reused, even if its insert fails. */
  async nextNumber(id: string, sequence: 'orderSeq' | 'commandSeq'): Promise<number | null> {
    const doc = await this.c.findOneAndUpdate({ _id: asString(id, 'locationId') }, { $inc: { [sequence]: 1 } }, { returnDocument: 'after' });
    return doc ? doc[sequence] : null;
  }
}
