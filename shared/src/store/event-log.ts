/**
 * The event log: every event the service's changes implied, in the order readers first see them,
 * each once. The relay records them here from the outboxes (events/outbox.ts); the feed
 * (GET /admin/v1/events) pages through them; webhooks are delivered from them.
 *
 * Each event's `_id` is its place in the feed, `seq`: one more than the highest recorded when it
 * was written, and unique. An event is inserted at `seq` only after the event at `seq - 1` could be
 * read, so a reader that has seen `seq` never finds a lower one appear after it, however many
 * relays write at once: two that pick the same place collide on the `_id`, and the loser takes
 * the next. (Ids that concurrent writers picked from a counter would not have this property.) The
 * event's own id is unique too: an event relayed twice is recorded once.
 *
 * Each event carries the deliveries it still owes (`undelivered`, by webhook-id, with their count),
 * so that a delivery queue lost with Redis is rebuilt from here.
 */
import type { Db, Filter } from 'mongodb';
import type { EventDoc, OutboxEntry } from './documents';
import { collections } from './mongo';
import { isDuplicateKey } from './store-errors';

/** One delivery an event owes: the subscription, by its webhook-id. */
export interface OwedDelivery {
  webhookId: string;
  subscriptionId: string;
}

/** An event to record, with the deliveries it owes. */
export interface EventToRecord extends OutboxEntry {
  owed: OwedDelivery[];
}

export interface EventQuery {
  afterSeq?: number;
  /** Only these locations (a filter, an operator's scope, or both intersected). */
  locationIds?: readonly string[];
  types?: readonly string[];
  limit: number;
}

/** Places tried before giving up a batch (each lost one means another writer recorded meanwhile). */
const PLACE_ATTEMPTS = 20;

export class EventLogRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).events;
  }

  /**
   * The place after the last event this process recorded: where its next record is tried, without
   * reading the top (a writer alone, as the relay mostly is, never needs to). Wrong only when
   * another process recorded since, and then the insert collides and the top is read.
   */
  private nextPlace: number | undefined;

  /**
   * Records the events not recorded yet, in the order given, each at the next place. Returns the
   * events as recorded (by this call or an earlier one), by event id, and those this call added.
   * An event recorded before collides on its id (unique), as a place taken does on `_id`: either
   * way what is recorded is read, and the rest go on top.
   */
  async record(events: EventToRecord[], now: Date): Promise<{ recorded: Map<string, EventDoc>; added: EventDoc[] }> {
    const recorded = new Map<string, EventDoc>();
    const added: EventDoc[] = [];
    let pending = [...new Map(events.map((event) => [event.id, event])).values()];
    for (let attempt = 1; pending.length > 0; attempt++) {
      const place = this.nextPlace ?? (await this.top()) + 1;
      const docs = pending.map((event, i) => eventDoc(event, place + i, now));
      try {
        await this.c.insertMany(docs, { ordered: true });
        this.nextPlace = place + docs.length;
        for (const doc of docs) recorded.set(doc.eventId, doc);
        added.push(...docs);
        return { recorded, added };
      } catch (err) {
        this.nextPlace = undefined;
        if (!isDuplicateKey(err) || attempt >= PLACE_ATTEMPTS) throw err;
      }
      // (an ordered insert may have written some before it stopped)
      for (const [id, doc] of await this.findByEventIds(pending.map((event) => event.id))) recorded.set(id, doc);
      pending = pending.filter((event) => !recorded.has(event.id));
    }
    return { recorded, added };
  }

  /** The highest place taken, 0 when none is. */
  private async top(): Promise<number> {
    const top = await this.c
      .find({}, { projection: { _id: 1 } })
      .sort({ _id: -1 })
      .limit(1)
      .next();
    return top?._id ?? 0;
  }

  async findByEventIds(eventIds: string[]): Promise<Map<string, EventDoc>> {
    if (eventIds.length === 0) return new Map();
    const docs = await this.c.find({ eventId: { $in: eventIds } }).toArray();
    return new Map(docs.map((doc) => [doc.eventId, doc]));
  }

  /**
   * The place of an event in the feed, or undefined when it is not (or no longer) recorded, or
   * not of `within` (a reader's locations; absent: all): another location's event is unknown.
   */
  async seqOf(eventId: string, within?: readonly string[]): Promise<number | undefined> {
    const doc = await this.c.findOne(
      { eventId, ...(within && { locationId: { $in: [...within] } }) },
      { projection: { _id: 1 } },
    );
    return doc?._id;
  }

  /** A page of the feed, oldest first. */
  page(query: EventQuery): Promise<EventDoc[]> {
    const filter: Filter<EventDoc> = { _id: { $gt: query.afterSeq ?? 0 } };
    if (query.locationIds) filter.locationId = { $in: [...query.locationIds] };
    if (query.types) filter.type = { $in: [...query.types] };
    return this.c.find(filter).sort({ _id: 1 }).limit(query.limit).toArray();
  }

  /** A delivery settled: the event no longer owes it (once, however often this is called). */
  async settled(eventId: string, webhookId: string): Promise<void> {
    await this.c.updateOne(
      { eventId, [`undelivered.${webhookId}`]: { $exists: true } },
      { $unset: { [`undelivered.${webhookId}`]: '' }, $inc: { pendingDeliveries: -1 } },
    );
  }

  /**
   * Deliveries settled together: one update of every event they name, each dropping the webhook-ids
   * it still owes of them (a webhook-id is of one event: an event settled before matches nothing,
   * and is not counted down twice). Deliveries of one event beyond its first go in a next update.
   */
  async settledAll(settled: { eventId: string; webhookId: string }[]): Promise<void> {
    let left = settled;
    while (left.length > 0) {
      const now = new Map<string, string>();
      const later: typeof settled = [];
      for (const item of left) {
        if (now.has(item.eventId)) later.push(item);
        else now.set(item.eventId, item.webhookId);
      }
      await this.c.updateMany(
        { $or: [...now].map(([eventId, webhookId]) => ({ eventId, [`undelivered.${webhookId}`]: { $exists: true } })) },
        {
          $unset: Object.fromEntries([...now.values()].map((webhookId) => [`undelivered.${webhookId}`, ''])),
          $inc: { pendingDeliveries: -1 },
        },
      );
      left = later;
    }
  }

  /** Events that still owe deliveries, oldest first, recorded since `since` (all when absent), after `afterSeq`. */
  owing(options: { since?: Date; afterSeq?: number; limit: number }): Promise<EventDoc[]> {
    const filter: Filter<EventDoc> = { pendingDeliveries: { $gt: 0 }, _id: { $gt: options.afterSeq ?? 0 } };
    if (options.since) filter.recordedAt = { $gte: options.since };
    return this.c.find(filter).sort({ _id: 1 }).limit(options.limit).toArray();
  }

  /**
   * Removes up to `limit` events recorded before `before`, oldest first; never the newest event,
   * whose place the next one follows. Returns how many were removed.
   */
  async purge(before: Date, limit: number): Promise<number> {
    const newest = await this.top();
    if (newest === 0) return 0;
    const due = await this.c
      .find({ recordedAt: { $lt: before }, _id: { $lt: newest } }, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    if (due.length === 0) return 0;
    const { deletedCount } = await this.c.deleteMany({ _id: { $in: due.map((doc) => doc._id) } });
    return deletedCount;
  }

  /** Events recorded (from the collection's metadata: no scan). */
  count(): Promise<number> {
    return this.c.estimatedDocumentCount();
  }
}

function eventDoc(event: EventToRecord, seq: number, now: Date): EventDoc {
  const doc: EventDoc = {
    _id: seq,
    eventId: event.id,
    type: event.type,
    locationId: event.locationId,
    timestamp: event.at,
    data: event.data,
    recordedAt: now,
  };
  if (event.owed.length > 0) {
    doc.undelivered = Object.fromEntries(event.owed.map((owed) => [owed.webhookId, owed.subscriptionId]));
    doc.pendingDeliveries = event.owed.length;
  }
  return doc;
}
