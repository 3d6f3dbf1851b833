import type { Db } from 'mongodb';
import { auditFullHash } from '../store/audit';
import { collections } from '../store/mongo';
import { fillIn } from './fill-in';
import type { Migration } from './runner';

/**
 * Since 0.6.0 `audit verify` and retention require every record's `fullHash` (a record without one
 * could have its `purgeAt` moved unseen). Records written before 0.5.0 have none: each gets it,
 * over its `purgeAt` and `claimedRequestId` as they are now.
 */
export const auditFullHashes: Migration = {
  id: '0.6.0-audit-full-hashes',
  description: 'each audit record written before 0.5.0 gets its fullHash',
  up: (db: Db, _log, lease) =>
    fillIn(
      collections(db).audit,
      {
        unfilled: { seq: { $exists: true }, hash: { $exists: true }, fullHash: { $exists: false } },
        field: 'fullHash',
        valueOf: auditFullHash,
      },
      lease,
    ),
};
