/**
 * The order archive: orders that left the hot `orders` collection (finished ones after
 * ORDER_ARCHIVE_AFTER, unsubmitted ones after SELECTING_TTL), kept until `purgeAt`. The hot
 * collection stays as small as the work in progress; the archive serves late requests about
 * finished orders and the operators' history.
 */
import type { Db } from 'mongodb';
import type { ArchivedOrderDoc, OrderDoc } from './documents';
import { collections, deleteDue, recordId } from './mongo';
import { atVersions, type OrderScope, type OrdersRepo } from './orders';
import { isDuplicateKey } from './store-errors';

export type { ArchivedOrderDoc };

/** A position in a history listing: after this completion time and, at that time, this number. */
export interface HistoryCursor {
  completeTime: Date;
  number: number;
}

export interface HistoryQuery {
  locationId: string;
  /** Completed at or after (inclusive). */
  from?: Date;
  /** Completed before (exclusive). */
  to?: Date;
  limit: number;
  after?: HistoryCursor;
}

export interface HistoryPage {
  orders: ArchivedOrderDoc[];
  /** Where the next page starts; absent on the last page. */
  next?: HistoryCursor;
}

export class OrderArchiveRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).orderArchive;
  }

  /**
   * An archived order in the scope, as the hot collection's `find` would have answered before it
   * moved. Expired carts are not found: to the customer a cart that expired is gone.
   */
  find(scope: OrderScope, number: number): Promise<ArchivedOrderDoc | null> {
    const filter: Record<string, unknown> = {
      _id: recordId(scope.locationId, number),
      locationId: scope.locationId,
      expiredAt: { $exists: false },
    };
    if (scope.sessionId !== undefined) filter.sessionId = scope.sessionId;
    return this.c.findOne(filter);
  }

  /**
   * Writes the copies, idempotently by `_id`: a plain insert (one command for the batch), and
   * where an order is already here (a run that crashed after copying, or an overlapping run) the
   * copy replaces it, since the hot document it was made from is the truth while it exists.
   * A duplicate key fails the whole batch on some servers and only its own document on others;
   * replacing every copy of the batch is right on both.
   */
  async keep(copies: ArchivedOrderDoc[]): Promise<void> {
    if (copies.length === 0) return;
    try {
      await this.c.insertMany(copies, { ordered: false });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await this.c.bulkWrite(
        copies.map((copy) => ({ replaceOne: { filter: { _id: copy._id }, replacement: copy, upsert: true } })),
        { ordered: false },
      );
    }
  }

  /**
   * Removes copies whose hot original changed after they were made (a cart edited while it was
   * being moved): each only if it is still the version copied. One command.
   */
  async dropCopies(copies: Pick<OrderDoc, '_id' | 'version'>[]): Promise<number> {
    if (copies.length === 0) return 0;
    const { deletedCount } = await this.c.deleteMany(atVersions(copies));
    return deletedCount;
  }

  /** Removes up to `limit` orders past their retention; served by the TTL index on `purgeAt`. */
  purge(now: Date, limit: number): Promise<number> {
    return deleteDue(this.c, 'purgeAt', now, limit);
  }

  /**
   * A location's archived finished orders completed in [from, to), by completion time then
   * number, one page at a time. Served by `{locationId, completeTime, number}` without a sort
   * stage; expired carts have no completion time and never match.
   */
  async history(query: HistoryQuery): Promise<HistoryPage> {
    const { locationId, from, to, limit, after } = query;
    const lower = after && (!from || after.completeTime >= from) ? after.completeTime : from;
    const completeTime: Record<string, Date> = { $gte: lower ?? new Date(0) };
    if (to) completeTime.$lt = to;
    const filter: Record<string, unknown> = { locationId, completeTime };
    if (after)
      filter.$or = [
        { completeTime: { $gt: after.completeTime } },
        { completeTime: after.completeTime, number: { $gt: after.number } },
      ];
    const docs = await this.c
      .find(filter)
      .sort({ completeTime: 1, number: 1 })
      .limit(limit + 1)
      .toArray();
    const orders = docs.slice(0, limit);
    const last = orders[orders.length - 1];
    return docs.length > limit && last
      ? { orders, next: { completeTime: last.completeTime!, number: last.number } }
      : { orders };
  }

  count(): Promise<number> {
    return this.c.estimatedDocumentCount();
  }
}

export interface FoundOrder {
  order: OrderDoc;
  /** True when it came from the archive: it is finished, and nothing writes to it any more. */
  archived: boolean;
}

/**
 * An order wherever it is: the hot collection first, the archive only when that misses (so the
 * archive costs nothing to requests about orders in progress). Archiving copies before it
 * deletes, so an order is always in at least one of the two.
 */
export async function findOrder(
  repos: { orders: Pick<OrdersRepo, 'find'>; archive: Pick<OrderArchiveRepo, 'find'> },
  scope: OrderScope,
  number: number,
): Promise<FoundOrder | null> {
  const hot = await repos.orders.find(scope, number);
  if (hot) return { order: hot, archived: false };
  const archived = await repos.archive.find(scope, number);
  return archived ? { order: archived, archived: true } : null;
}
