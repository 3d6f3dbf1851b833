import type { AnyBulkWriteOperation, Collection, Filter, WithId } from 'mongodb';
import type { MigrationLease } from './runner';

const BATCH = 500;

/**
 * A migration's backfill: each document `unfilled` matches gets `field` set to what `valueOf` makes
 * of it (undefined: it is left as it is), in pages by `_id`, each page's writes sent after
 * `lease.check()`. A document filled meanwhile is not written again. Returns how many it changed.
 */
export async function fillIn<T extends { _id: string }>(
  collection: Collection<T>,
  fill: { unfilled: Filter<T>; field: keyof T & string; valueOf(doc: WithId<T>): unknown },
  lease: Pick<MigrationLease, 'check'>,
): Promise<number> {
  const stillUnfilled = { [fill.field]: { $exists: false } };
  let changed = 0;
  for (let after = ''; ;) {
    const batch = await collection
      .find({ ...fill.unfilled, _id: { $gt: after } } as Filter<T>)
      .sort({ _id: 1 })
      .limit(BATCH)
      .toArray();
    const updates = batch.flatMap((doc): AnyBulkWriteOperation<T>[] => {
      const value = fill.valueOf(doc);
      if (value === undefined) return [];
      const filter = { _id: doc._id, ...stillUnfilled } as Filter<T>;
      return [{ updateOne: { filter, update: { $set: { [fill.field]: value } as Partial<T> } } }];
    });
    if (updates.length > 0) {
      lease.check();
      changed += (await collection.bulkWrite(updates, { ordered: false })).modifiedCount;
    }
    if (batch.length < BATCH) return changed;
    after = batch.at(-1)!._id;
  }
}
