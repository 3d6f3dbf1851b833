import type { Db } from 'mongodb';
import { auditFullHash } from '../store/audit';
import { collections } from '../store/mongo';
import type { Migration } from './runner';

const BATCH = 500;

/**
 * Since 0.6.0 `audit verify` and retention require every record's `fullHash` (a record without one
 * could have its `purgeAt` moved unseen). Records written before 0.5.0 have none: each gets it,
 * over its `purgeAt` and `claimedRequestId` as they are now.
 */
export const auditFullHashes: Migration = {
  id: '0.6.0-audit-full-hashes',
  description: 'each audit record written before 0.5.0 gets its fullHash',
  async up(db: Db, _log, lease) {
    const audit = collections(db).audit;
    let changed = 0;
    for (;;) {
      const batch = await audit
        .find({ seq: { $exists: true }, hash: { $exists: true }, fullHash: { $exists: false } })
        .limit(BATCH)
        .toArray();
      if (batch.length === 0) return changed;
      lease.check();
      const result = await audit.bulkWrite(
        batch.map((doc) => ({
          updateOne: {
            filter: { _id: doc._id, fullHash: { $exists: false } },
            update: { $set: { fullHash: auditFullHash(doc) } },
          },
        })),
        { ordered: false },
      );
      changed += result.modifiedCount;
    }
  },
};
