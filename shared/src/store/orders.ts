import type { Db, Filter, UpdateFilter } from 'mongodb';
import type { OrderChange, OrderState } from '../domain/order-state';
import type { OrderRow } from '../domain/records';
import { randomMarks } from '../util/random-marks';
import type { OrderDoc } from './documents';
import { type EventsOf, NO_EVENTS, outboxAfter, outboxOfNew, withOutbox } from './outboxes';
import { GROUP_COMMIT_MAX, groupCommit } from './group-commit';
import { AppliedJobsLedger, ATTEMPT_MARK } from './applied-jobs';
import { collections, recordId } from './mongo';
import { asInteger, asString } from './query-values';
import { guardedRetry, RACED } from './guarded-retry';

/**
 * How many applied job ids an order keeps in its own document at least: far more than can be in
 * flight for one order. It holds up to twice as many, then moves all but these to the applied-jobs
 * ledger in one insert (store/applied-jobs.ts): one extra command per this many writes of a busy
 * order, and none for the others.
 */
export const APPLIED_JOBS_KEPT = 64;
const APPLIED_JOBS_HELD = 2 * APPLIED_JOBS_KEPT;

/** An order as read for display: everything but the applied job ids (only the worker needs them). */
export type ListedOrder = Omit<OrderDoc, 'appliedJobs'>;

/**
 * A version-guarded write of one order, and its attempt's entry among the
 * order's applied jobs (by which it is told to have landed).
 */
interface GuardedWrite {
  filter: Pick<OrderDoc, '_id' | 'locationId' | 'number' | 'version'>;
  update: UpdateFilter<OrderDoc>;
  entry: string;
}

/** The filter of a write to `order` as it was read: it matches only while nobody wrote since. */
const atVersion = (order: OrderDoc): GuardedWrite['filter'] => ({
  _id: order._id,
  locationId: order.locationId,
  number: order.number,
  version: order.version,
});

const attemptMark = randomMarks(6);

/**
 * A job's entry among an order's applied jobs: its id, and a mark of this attempt, by which a
 * batched write tells its own landing from another run's of the same job (see guardedWrites).
 */
function appliedEntry(jobId: string): string {
  return `${jobId}${ATTEMPT_MARK}${attemptMark()}`;
}

/** Whether a run of `jobId` wrote this order (an entry of before the attempt marks is the id alone). */
export function hasApplied(order: Pick<OrderDoc, 'appliedJobs'>, jobId: string): boolean {
  return order.appliedJobs.some(
    (entry) => entry === jobId || (entry.startsWith(jobId) && entry[jobId.length] === ATTEMPT_MARK),
  );
}

type VersionClause = { _id: { $in: string[] }; version: number };

/**
 * A filter matching each of `docs` only while it is at the version given: grouped by version, a
 * few `_id $in` clauses rather than one clause per document.
 */
export function atVersions(docs: Pick<OrderDoc, '_id' | 'version'>[]): VersionClause | { $or: VersionClause[] } {
  const byVersion = new Map<number, string[]>();
  for (const { _id, version } of docs) {
    const ids = byVersion.get(version);
    if (ids) ids.push(_id);
    else byVersion.set(version, [_id]);
  }
  const clauses = [...byVersion].map(([version, ids]) => ({ _id: { $in: ids }, version }));
  return clauses.length === 1 ? clauses[0]! : { $or: clauses };
}
const WITHOUT_JOBS = { projection: { appliedJobs: 0 } } as const;

/**
 * Orders not yet finished: a cart, a finished-but-unsubmitted order, one on the registers, and
 * a FAILED one (an operator may recover it to PLACED). What a customer session's cap counts.
 */
export const OPEN_STATES: OrderState[] = ['SELECTING', 'NEW', 'PLACED', 'FAILED'];

export interface OrderScope {
  locationId: string;
  /** Set when a customer acts: the order must be one of that session's. */
  sessionId?: string;
}

export interface NewOrder {
  locationId: string;
  number: number;
  state: 'SELECTING' | 'PLACED';
  rows: OrderRow[];
  tableNumber?: number;
  userNumber?: number;
  sessionId?: string;
  idempotencyId?: string;
}

export class OrdersRepo {
  private readonly c;
  private readonly ledger: AppliedJobsLedger;

  /** `appliedJobsKeptMs`: how long job ids moved to the ledger are kept (IDEMPOTENCY_TTL). */
  constructor(db: Db, appliedJobsKeptMs: number) {
    this.c = collections(db).orders;
    this.ledger = new AppliedJobsLedger(db, appliedJobsKeptMs);
  }

  /**
   * Whether a run of `jobId` wrote this order, in its document or, for an order that moved entries
   * out, in the ledger (one read then). For a job that may have run before: a keyed one (its
   * retry may come whenever Redis lost its record) or one run again.
   */
  async appliedEver(
    order: Pick<OrderDoc, '_id' | 'appliedJobs' | 'appliedJobsMoved'>,
    jobId: string,
  ): Promise<boolean> {
    return hasApplied(order, jobId) || (order.appliedJobsMoved === true && (await this.ledger.has(order._id, jobId)));
  }

  /** Ledger entries past their time: what the TTL index removes, for where no TTL monitor runs. */
  purgeAppliedJobs(now: Date, limit: number): Promise<number> {
    return this.ledger.purge(now, limit);
  }

  /** Inserts a new order, with the events its creation implies (`events` of the order as inserted) in its outbox. */
  async insert(order: NewOrder, now: Date, events: EventsOf<OrderDoc> = NO_EVENTS): Promise<OrderDoc> {
    const doc: OrderDoc = {
      _id: recordId(order.locationId, order.number),
      version: 0,
      failureCount: 0,
      appliedJobs: [],
      guestCount: 1,
      createdAt: now,
      updatedAt: now,
      ...order,
      ...(order.state === 'PLACED' ? { orderTime: now } : {}),
    };
    await this.c.insertOne({ ...doc, ...outboxOfNew(events(doc)) });
    return doc;
  }

  /** The order a request with an Idempotency-Key created, if it did. */
  findCreatedBy(locationId: string, idempotencyId: string): Promise<OrderDoc | null> {
    return this.c.findOne({ locationId, idempotencyId });
  }

  find(scope: OrderScope, number: number): Promise<OrderDoc | null> {
    const filter: Record<string, unknown> = {
      _id: recordId(scope.locationId, number),
      locationId: asString(scope.locationId, 'locationId'),
      number,
    };
    if (scope.sessionId !== undefined) filter.sessionId = asString(scope.sessionId, 'sessionId');
    return this.c.findOne(filter);
  }

  /**
   * Orders in a state numbered above `after`, ascending, at most `limit`: one
   * range of the `{locationId, state, number}` index.
   */
  listByState(
    locationId: string,
    state: OrderState,
    after = 0,
    limit?: number,
    overdue?: boolean,
  ): Promise<ListedOrder[]> {
    const filter: Filter<OrderDoc> = {
      locationId: asString(locationId, 'locationId'),
      state: asString(state, 'state') as OrderState,
      number: { $gt: asInteger(after, 'after') },
    };
    // (a filter on the range read, not an index of its own: overdue orders are few among a location's PLACED)
    if (overdue !== undefined) filter.overdue = overdue ? true : { $ne: true };
    const cursor = this.c.find<ListedOrder>(filter, WITHOUT_JOBS).sort({ number: 1 });
    return (limit ? cursor.limit(limit) : cursor).toArray();
  }

  /**
   * The session's open orders (a customer's, capped per session): one range of
   * `{locationId, sessionId, state, number}` per state.
   */
  countOpen(locationId: string, sessionId: string): Promise<number> {
    return this.c.countDocuments({
      locationId: asString(locationId, 'locationId'),
      sessionId: asString(sessionId, 'sessionId'),
      state: { $in: OPEN_STATES },
    });
  }

  /**
   * Orders of these locations written at or after `since`, in no particular order: what streams
   * re-read after missing events. One command for many locations (index `{locationId, updatedAt}`,
   * one range per location).
   */
  listChangedSince(locationIds: string[], since: Date): Promise<ListedOrder[]> {
    if (locationIds.length === 0) return Promise.resolve([]);
    const ids = locationIds.map((id) => asString(id, 'locationId'));
    return this.c.find<ListedOrder>({ locationId: { $in: ids }, updatedAt: { $gte: since } }, WITHOUT_JOBS).toArray();
  }

  /** The session's PLACED orders, by number (numbers only: each is then changed through its own read). */
  placedOfSession(locationId: string, sessionId: string): Promise<Pick<OrderDoc, 'number'>[]> {
    return this.c
      .find<Pick<OrderDoc, 'number'>>(
        {
          locationId: asString(locationId, 'locationId'),
          sessionId: asString(sessionId, 'sessionId'),
          state: 'PLACED',
        },
        { projection: { _id: 0, number: 1 } },
      )
      .sort({ number: 1 })
      .toArray();
  }

  /**
   * Moves on the version (and `updatedAt`) of the session's orders a customer may still move
   * (SELECTING, NEW), changing nothing else: a finish or submit decided on them before this
   * fails its version guard and decides again (see the session close). One command.
   */
  async touchOpenOfSession(locationId: string, sessionId: string, now: Date): Promise<number> {
    const { modifiedCount } = await this.c.updateMany(
      {
        locationId: asString(locationId, 'locationId'),
        sessionId: asString(sessionId, 'sessionId'),
        state: { $in: ['SELECTING', 'NEW'] },
      },
      { $set: { updatedAt: now }, $inc: { version: 1 } },
    );
    return modifiedCount;
  }

  /**
   * Writes a decided change only if nobody wrote since `order` was read, with the events it
   * implies (`events` of the order after it) in the order's outbox, in the same write, for the relay.
   * Returns the new document, or null when the version moved on (the caller re-reads and re-decides).
   * The new document is what was read plus what was written, so it is not sent back by MongoDB.
   */
  async applyChange(
    order: OrderDoc,
    change: OrderChange,
    jobId: string,
    now: Date,
    events: EventsOf<OrderDoc> = NO_EVENTS,
  ): Promise<OrderDoc | null> {
    const entry = appliedEntry(jobId);
    let appliedJobs = [...order.appliedJobs, entry];
    let moved: { appliedJobs: string[]; appliedJobsMoved: true } | undefined;
    if (appliedJobs.length > APPLIED_JOBS_HELD) {
      // kept before the write that drops them: a crash in between leaves them in both places
      await this.ledger.keep(order, appliedJobs.slice(0, -APPLIED_JOBS_KEPT), now);
      appliedJobs = appliedJobs.slice(-APPLIED_JOBS_KEPT);
      moved = { appliedJobs, appliedJobsMoved: true };
    }
    const set = { ...change, ...moved, updatedAt: now };
    const after: OrderDoc = { ...order, ...set, appliedJobs, version: order.version + 1 };
    const entries = events(after);
    // (the version guard makes the stored list the one read: the entry, unique to this
    // attempt, is added to it rather than the list written again)
    const base = { $set: set, $inc: { version: 1 }, ...(moved ? {} : { $addToSet: { appliedJobs: entry } }) };
    const written = await this.guardedWrites.load({
      filter: atVersion(order),
      update: withOutbox(base, entries),
      entry,
    });
    return written ? { ...after, ...outboxAfter(order, entries) } : null;
  }

  /**
   * Up to `limit` orders in one of `states` that nothing has written since `before`: what the
   * lifecycle job moves to the archive. Served by the `{state, updatedAt}` index; no sort, since
   * every batch moved leaves the collection and the next read finds the rest.
   */
  untouchedSince(states: OrderState[], before: Date, limit: number): Promise<OrderDoc[]> {
    return this.c
      .find({ state: { $in: states }, updatedAt: { $lte: before } })
      .limit(limit)
      .toArray();
  }

  /**
   * Deletes each order only if it is still at the version given (the archive copy is of that
   * version). One command: the orders are grouped by version, so the filter is a few `_id $in`
   * clauses rather than one clause per order. Returns how many were deleted.
   */
  async removeIfUnchanged(orders: Pick<OrderDoc, '_id' | 'version'>[]): Promise<number> {
    if (orders.length === 0) return 0;
    const { deletedCount } = await this.c.deleteMany(atVersions(orders));
    return deletedCount;
  }

  /** The stored versions of those of `ids` that are still here. */
  async versionsOf(ids: string[]): Promise<Map<string, number>> {
    const docs = await this.c.find({ _id: { $in: ids } }, { projection: { version: 1 } }).toArray();
    return new Map(docs.map((doc) => [doc._id, doc.version]));
  }

  /**
   * Marks the placement that began at `orderTime` overdue, if the order is still PLACED in that
   * placement and not yet marked: a read, then a write guarded by the version read, so that of all
   * who try (a job run again, two workers) one alone marks it and records its event (`events` of
   * the order after). The version moves on, so that streams tell the marked order from the
   * unmarked one. `jobId`, the marking job, is kept. The order after, or null when nothing was marked.
   */
  async markOverdue(
    locationId: string,
    number: number,
    orderTime: Date,
    now: Date,
    jobId: string,
    events: EventsOf<OrderDoc> = NO_EVENTS,
  ): Promise<OrderDoc | null> {
    const filter = {
      _id: recordId(locationId, number),
      locationId,
      number,
      state: 'PLACED' as const,
      orderTime,
      overdue: { $ne: true },
    };
    return guardedRetry(async () => {
      const order = await this.c.findOne(filter);
      if (!order) return null;
      const set = { overdue: true, overdueJob: jobId, updatedAt: now };
      const after: OrderDoc = { ...order, ...set, version: order.version + 1 };
      // Not batched (an order deadline job's write is rare): its answer tells whether it landed.
      const { modifiedCount } = await this.c.updateOne(
        atVersion(order),
        withOutbox({ $set: set, $inc: { version: 1 } }, events(after)),
      );
      return modifiedCount === 1 ? after : RACED;
    });
  }

  /** The order, if `jobId` marked this placement overdue and it is still PLACED in it. */
  markedOverdueBy(locationId: string, number: number, orderTime: Date, jobId: string): Promise<OrderDoc | null> {
    return this.c.findOne({
      _id: recordId(locationId, number),
      locationId,
      number,
      state: 'PLACED',
      orderTime,
      overdue: true,
      overdueJob: jobId,
    });
  }

  /**
   * The version-guarded writes of concurrent jobs, as one `bulkWrite`: true for each that was
   * written. The bulk's answer counts the writes that matched without naming them; when it falls
   * short, the orders as stored tell, by each attempt's entry among their applied jobs (two runs
   * of one job, which BullMQ may make after a lost lock, write the same job id, but not the same entry).
   */
  private readonly guardedWrites = groupCommit<GuardedWrite, boolean>(async (writes) => {
    if (writes.length === 1) {
      const { modifiedCount } = await this.c.updateOne(writes[0]!.filter, writes[0]!.update);
      return [modifiedCount === 1];
    }
    const { modifiedCount } = await this.c.bulkWrite(
      writes.map(({ filter, update }) => ({ updateOne: { filter, update } })),
      { ordered: false },
    );
    if (modifiedCount === writes.length) return writes.map(() => true);
    // Some lost their version race (rare): the orders as they are now tell which landed.
    const ids = [...new Set(writes.map((write) => write.filter._id))];
    const stored = new Map((await this.c.find({ _id: { $in: ids } }).toArray()).map((doc) => [doc._id, doc]));
    return writes.map((write) => {
      const doc = stored.get(write.filter._id);
      return doc !== undefined && doc.appliedJobs.includes(write.entry);
    });
  }, GROUP_COMMIT_MAX);

  /** Documents in the collection (from its metadata on MongoDB: no scan). */
  count(): Promise<number> {
    return this.c.estimatedDocumentCount();
  }

  /** Replaces the rows of a SELECTING order, guarded by its version like every order write. */
  async replaceRows(order: OrderDoc, rows: OrderRow[], now: Date): Promise<OrderDoc | null> {
    const { modifiedCount } = await this.c.updateOne(
      {
        _id: order._id,
        locationId: order.locationId,
        number: order.number,
        version: order.version,
        state: 'SELECTING',
      },
      { $set: { rows, updatedAt: now }, $inc: { version: 1 } },
    );
    return modifiedCount === 1 ? { ...order, rows, updatedAt: now, version: order.version + 1 } : null;
  }
}
