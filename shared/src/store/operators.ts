import type { Db, Filter } from 'mongodb';
import type { OperatorDoc, OperatorRole } from './documents';
import { newId } from './ids';
import { collections } from './mongo';
import type { Page } from './page';
import { asString, withinLocations } from './query-values';

export type { OperatorDoc };

export interface OperatorChanges {
  name?: string;
  role?: OperatorRole;
  /** `null`: every location. */
  locationIds?: string[] | null;
}

export class OperatorsRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).operators;
  }

  async create(
    operator: Pick<OperatorDoc, 'name' | 'role' | 'locationIds' | 'tokenHash'>,
    now: Date,
  ): Promise<OperatorDoc> {
    const doc: OperatorDoc = { _id: newId(), createdAt: now, ...operator };
    await this.c.insertOne(doc);
    return doc;
  }

  find(id: string): Promise<OperatorDoc | null> {
    return this.c.findOne({ _id: asString(id, 'operatorId') });
  }

  /** Those of `ids` that exist (one read). */
  findMany(ids: string[]): Promise<OperatorDoc[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.c.find({ _id: { $in: ids.map((id) => asString(id, 'operatorId')) } }).toArray();
  }

  findByTokenHash(tokenHash: string): Promise<OperatorDoc | null> {
    return this.c.findOne({ tokenHash: asString(tokenHash, 'tokenHash') });
  }

  /** One page by id; `within`: only operators whose locations all lie within these (a bound reader's). */
  list(page: Page<string>, within?: readonly string[]): Promise<OperatorDoc[]> {
    const filter: Filter<OperatorDoc> = {};
    if (page.after !== undefined) filter._id = { $gt: asString(page.after, 'after') };
    if (within) filter.locationIds = withinLocations(within);
    return this.c.find(filter).sort({ _id: 1 }).limit(page.limit).toArray();
  }

  /** The operator as changed; null when it does not exist. */
  update(id: string, changes: OperatorChanges): Promise<OperatorDoc | null> {
    const { locationIds, ...set } = changes;
    const update = {
      ...(Object.keys(set).length > 0 || Array.isArray(locationIds)
        ? { $set: { ...set, ...(locationIds ? { locationIds } : {}) } }
        : {}),
      ...(locationIds === null ? { $unset: { locationIds: '' as const } } : {}),
    };
    return this.c.findOneAndUpdate({ _id: asString(id, 'operatorId') }, update, { returnDocument: 'after' });
  }

  /** Replaces the token: the old one stops at once (no grace, unlike a register key). Null when it does not exist. */
  rotateToken(id: string, tokenHash: string, now: Date): Promise<OperatorDoc | null> {
    return this.c.findOneAndUpdate(
      { _id: asString(id, 'operatorId') },
      { $set: { tokenHash, tokenRotatedAt: now } },
      { returnDocument: 'after' },
    );
  }

  /** True when it existed. */
  async remove(id: string): Promise<boolean> {
    const { deletedCount } = await this.c.deleteOne({ _id: asString(id, 'operatorId') });
    return deletedCount === 1;
  }
}
