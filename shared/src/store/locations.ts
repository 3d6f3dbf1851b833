import type { Db, Filter, UpdateFilter } from 'mongodb';
import type { LocationDoc, SweptChange } from './documents';
import { GROUP_COMMIT_MAX, groupCommit } from './group-commit';
import { newId } from './ids';
import { collections } from './mongo';
import { guardedRetry, RACED } from './guarded-retry';
import { type EventsOf, NO_EVENTS, withOutbox } from './outboxes';
import type { Page } from './page';
import { asString } from './query-values';

export type { LocationDoc };

/** What an admin may change of a location. */
export interface LocationChanges {
  name?: string;
  failureThreshold?: number;
  orderDeadline?: string;
}

/** The reason a location paused by itself after failed orders (PAUSE_AFTER_FAILED_ORDERS). */
export const FAILED_ORDERS_REASON = 'failed orders';

/** What a customer's admission reads of a location. */
export type Admission = Pick<
  LocationDoc,
  '_id' | 'online' | 'pausedAt' | 'pausedUntil' | 'pauseReason' | 'menu' | 'snoozes'
>;

const PAUSE_FIELDS = ['pausedAt', 'pausedUntil', 'pauseReason'] as const;

/** A decided change of a location: fields set and removed, and the sweep's mark of it. */
export interface ViewChange {
  set: Partial<LocationDoc>;
  unset?: readonly (keyof LocationDoc)[];
  /** Recorded as unannounced to streams until the sweep has announced it (see `unannouncedChanges`). */
  mark?: SweptChange;
}

/** The location as a change leaves it. */
function changed(doc: LocationDoc, change: ViewChange): LocationDoc {
  const after: LocationDoc = { ...doc, ...change.set, rev: (doc.rev ?? 0) + 1 };
  for (const field of change.unset ?? []) delete after[field];
  if (change.mark && !after.unannounced?.includes(change.mark))
    after.unannounced = [...(after.unannounced ?? []), change.mark];
  return after;
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

  /** Those of `ids` that name no location, in the order given (one read). */
  async missing(ids: readonly string[]): Promise<string[]> {
    const checked = ids.map((id) => asString(id, 'locationId'));
    const found = new Set(
      (await this.c.find({ _id: { $in: checked } }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id),
    );
    return checked.filter((id) => !found.has(id));
  }

  find(id: string): Promise<LocationDoc | null> {
    return this.c.findOne({ _id: asString(id, 'locationId') });
  }

  /**
   * Locations by id (creation order), one page; served by the `_id` index. `within`: only these
   * (an operator's scope); `online`: those online (or not) alone.
   */
  list(page: Page<string>, options: { within?: readonly string[]; online?: boolean } = {}): Promise<LocationDoc[]> {
    const ids: Filter<LocationDoc>['_id'] = {};
    if (page.after !== undefined) ids.$gt = asString(page.after, 'after');
    if (options.within) ids.$in = options.within.map((id) => asString(id, 'locationId'));
    const filter: Filter<LocationDoc> = Object.keys(ids).length === 0 ? {} : { _id: ids };
    if (options.online !== undefined) filter.online = options.online ? true : { $ne: true };
    return this.c.find(filter).sort({ _id: 1 }).limit(page.limit).toArray();
  }

  /** Applies the changes; the location as it is after them, or null when there is none. */
  update(id: string, changes: LocationChanges): Promise<LocationDoc | null> {
    return this.change(id, () => ({ set: changes }));
  }

  /**
   * A location's failure threshold alone (the worker's read for each failure report): the reads
   * of concurrent reports share one command (group-commit.ts).
   */
  failureThreshold(id: string): Promise<number | undefined> {
    return this.thresholds.load(asString(id, 'locationId'));
  }

  private readonly thresholds = groupCommit<string, number | undefined>(async (ids) => {
    const docs = await this.c
      .find({ _id: { $in: [...new Set(ids)] } }, { projection: { failureThreshold: 1 } })
      .toArray();
    const byId = new Map(docs.map((doc) => [doc._id, doc.failureThreshold]));
    return ids.map((id) => byId.get(id));
  }, GROUP_COMMIT_MAX);

  /** A location's own order deadline, when it has one (the worker's read for each placement). */
  async orderDeadline(id: string): Promise<string | undefined> {
    const doc = await this.c.findOne({ _id: asString(id, 'locationId') }, { projection: { orderDeadline: 1 } });
    return doc?.orderDeadline;
  }

  /**
   * What a customer's create or submit checks: the pause, the announced
   * presence, the menu and its snoozes (one read).
   */
  admission(id: string): Promise<Admission | null> {
    return this.c.findOne<Admission>(
      { _id: asString(id, 'locationId') },
      { projection: { online: 1, pausedAt: 1, pausedUntil: 1, pauseReason: 1, menu: 1, snoozes: 1 } },
    );
  }

  /** Hands out the next number of a sequence; a number is never reused, even if its insert fails. */
  async nextNumber(id: string, sequence: 'orderSeq' | 'commandSeq'): Promise<number | null> {
    const doc = await this.c.findOneAndUpdate(
      { _id: asString(id, 'locationId') },
      { $inc: { [sequence]: 1 } },
      { returnDocument: 'after' },
    );
    return doc ? doc[sequence] : null;
  }

  /**
   * Pauses (or re-pauses, with a new end) a location, with the pause's
   * events; the location after, or null when there is none.
   */
  pause(
    id: string,
    pause: { until?: Date; reason?: string },
    now: Date,
    events: EventsOf<LocationDoc> = NO_EVENTS,
  ): Promise<LocationDoc | null> {
    const set: Partial<LocationDoc> = { pausedAt: now };
    const unset: (keyof LocationDoc)[] = [];
    if (pause.until) set.pausedUntil = pause.until;
    else unset.push('pausedUntil');
    if (pause.reason !== undefined) set.pauseReason = pause.reason;
    else unset.push('pauseReason');
    return this.change(id, () => ({ set, unset }), events);
  }

  /**
   * Ends a pause, with its events. `expiredAt`: only a pause whose `until` has come by then (the
   * sweep's end of a timed pause; a pause changed meanwhile is left alone), recorded as
   * unannounced for the sweep. The location after, or null when no pause was ended (none in
   * place, or none of that kind): the caller announces only a real end.
   */
  resume(
    id: string,
    now: Date,
    expiredAt?: Date,
    events: EventsOf<LocationDoc> = NO_EVENTS,
  ): Promise<LocationDoc | null> {
    return this.change(
      id,
      (doc) => {
        if (!doc.pausedAt || (expiredAt && !(doc.pausedUntil && doc.pausedUntil <= expiredAt))) return undefined;
        return { set: { resumedAt: now }, unset: PAUSE_FIELDS, ...(expiredAt ? { mark: 'resumed' as const } : {}) };
      },
      events,
    );
  }

  /** The locations with changes the sweep wrote and did not announce (few: a sweep died between the two). */
  unannouncedChanges(): Promise<LocationDoc[]> {
    return this.c.find({ unannounced: { $exists: true } }).toArray();
  }

  /**
   * The sweep announced `changes`: cleared, unless more were written
   * meanwhile (then the next sweep announces them all).
   */
  async announced(id: string, changes: SweptChange[]): Promise<void> {
    await this.c.updateOne({ _id: asString(id, 'locationId'), unannounced: changes }, { $unset: { unannounced: '' } });
  }

  /** Ids of the locations whose timed pause has ended by `now` but is still in place. */
  async pausesEnded(now: Date): Promise<string[]> {
    const docs = await this.c.find({ pausedUntil: { $lte: now } }, { projection: { _id: 1 } }).toArray();
    return docs.map((doc) => doc._id);
  }

  /** The announced presence of these locations, by id (one read); a location not found is absent. */
  async announcedOnline(ids: string[]): Promise<Map<string, boolean>> {
    if (ids.length === 0) return new Map();
    const docs = await this.c
      .find({ _id: { $in: ids.map((id) => asString(id, 'locationId')) } }, { projection: { online: 1 } })
      .toArray();
    return new Map(docs.map((doc) => [doc._id, doc.online === true]));
  }

  /** Ids of the locations announced online. */
  async onlineIds(): Promise<string[]> {
    const docs = await this.c.find({ online: true }, { projection: { _id: 1 } }).toArray();
    return docs.map((doc) => doc._id);
  }

  /**
   * Records a presence change, with its events, guarded: only the writer that moves the stored
   * state writes, so that each change is announced once (recorded as unannounced until it is).
   * The location after, or null when it already was so.
   */
  setOnline(
    id: string,
    online: boolean,
    now: Date,
    events: EventsOf<LocationDoc> = NO_EVENTS,
  ): Promise<LocationDoc | null> {
    return this.change(
      id,
      (doc) =>
        (doc.online === true) === online
          ? undefined
          : { set: { online, onlineSince: now }, mark: online ? 'online' : 'offline' },
      events,
    );
  }

  /** Locations online, and paused now (the gauges, computed on scrape). */
  async counts(now: Date): Promise<{ online: number; paused: number }> {
    const [online, paused] = await Promise.all([
      this.c.countDocuments({ online: true }),
      this.c.countDocuments({
        pausedAt: { $exists: true },
        $or: [{ pausedUntil: { $exists: false } }, { pausedUntil: { $gt: now } }],
      }),
    ]);
    return { online, paused };
  }

  /**
   * One more of the location's orders reached FAILED: at `limit` in a row it pauses (reason
   * `failed orders`, no end) and the count starts again. Returns the location when this call
   * paused it (the caller announces it), else null. Each step is one guarded command.
   */
  async noteFailedOrder(
    id: string,
    limit: number,
    now: Date,
    events: EventsOf<LocationDoc> = NO_EVENTS,
  ): Promise<LocationDoc | null> {
    const counted = await this.c.findOneAndUpdate(
      { _id: asString(id, 'locationId') },
      { $inc: { failedInRow: 1 } },
      { returnDocument: 'after' },
    );
    if (!counted || (counted.failedInRow ?? 0) < limit) return null;
    return this.change(
      counted._id,
      (doc) =>
        (doc.failedInRow ?? 0) < limit || doc.pausedAt
          ? undefined
          : { set: { pausedAt: now, pauseReason: FAILED_ORDERS_REASON, failedInRow: 0 } },
      events,
    );
  }

  /**
   * A change of the location (what its view shows, its menu: store/menus.ts): read, decide, then
   * write conditional on the revision read, with the events of the location as the change leaves
   * it in its outbox (so an event always shows the change it announces). `decide` returns nothing
   * when there is nothing to change. The location after, or null when there is none or nothing changed.
   */
  async change(
    id: string,
    decide: (doc: LocationDoc) => ViewChange | undefined,
    events: EventsOf<LocationDoc> = NO_EVENTS,
  ): Promise<LocationDoc | null> {
    return guardedRetry(async () => {
      const doc = await this.c.findOne({ _id: asString(id, 'locationId') });
      const decided = doc && decide(doc);
      if (!doc || !decided) return null;
      const after = changed(doc, decided);
      const update: UpdateFilter<LocationDoc> = {
        $set: { ...decided.set, rev: after.rev },
        ...(decided.unset?.length ? { $unset: Object.fromEntries(decided.unset.map((field) => [field, ''])) } : {}),
        ...(decided.mark ? { $addToSet: { unannounced: decided.mark } } : {}),
      };
      const { modifiedCount } = await this.c.updateOne(
        { _id: doc._id, rev: doc.rev ?? { $exists: false } },
        withOutbox(update, events(after)),
      );
      return modifiedCount === 1 ? after : RACED;
    });
  }

  /** An order of the location COMPLETED: the failures in a row start again (no write when there were none). */
  async resetFailedOrders(id: string): Promise<void> {
    await this.c.updateOne({ _id: asString(id, 'locationId'), failedInRow: { $gt: 0 } }, { $set: { failedInRow: 0 } });
  }
}
