/**
 * The outboxes: the collections whose writes record their events in the changed document
 * (orders, commands, locations; see events/outbox.ts), and the order archive, where an order
 * archived before its events were relayed takes them. A document's `outbox` holds its events by
 * id, and `outboxCount` how many: a write adds its events with `$set` of their ids and `$inc`,
 * and the relay, once they are recorded in the event log, removes exactly those it read. So a
 * document written again while the relay works keeps only its new events, however hot it is.
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter, UpdateFilter } from 'mongodb';
import type { OutboxEntry, WithOutbox } from './documents';
import { collections } from './mongo';

/** The events a write implies, given the document as the write leaves it (events/outbox.ts makes them). */
export type EventsOf<T> = (after: T) => OutboxEntry[];
export const NO_EVENTS = (): OutboxEntry[] => [];

/** The outbox fields of a document inserted with `entries` (none when there are none). */
export function outboxOfNew(entries: OutboxEntry[]): WithOutbox {
  return entries.length === 0 ? {} : { outbox: Object.fromEntries(entries.map((entry) => [entry.id, entry])), outboxCount: entries.length };
}

/** An update of a document with `entries` added to its outbox, in the same write. */
export function withOutbox<U extends { $set?: object; $inc?: object }>(update: U, entries: OutboxEntry[]): U {
  if (entries.length === 0) return update;
  return {
    ...update,
    $set: { ...update.$set, ...Object.fromEntries(entries.map((entry) => [`outbox.${entry.id}`, entry])) },
    $inc: { ...update.$inc, outboxCount: entries.length },
  };
}

/** A document's events waiting to be relayed, in the order of its writes. */
export interface HeldEvents {
  _id: string;
  outbox: OutboxEntry[];
  /** `outboxCount` as read. */
  count: number;
}

/** The order of one document's events: by the version its write left, then by place in the write. */
const byRank = (a: OutboxEntry, b: OutboxEntry) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1];

/** What the relay reads and clears of one collection. */
export interface OutboxReader {
  readonly name: string;
  held(limit: number): Promise<HeldEvents[]>;
  cleared(docs: HeldEvents[]): Promise<void>;
}

export class Outbox<T extends { _id: string } & WithOutbox> implements OutboxReader {
  constructor(
    /** The collection's name, for logs and metrics. */
    readonly name: string,
    private readonly c: Collection<T>,
  ) {}

  /** Up to `limit` documents holding events (the partial index on `outboxCount`). */
  async held(limit: number): Promise<HeldEvents[]> {
    const docs = await this.c
      .find({ outboxCount: { $gt: 0 } } as Filter<T>, { projection: { outbox: 1, outboxCount: 1 } })
      .limit(limit)
      .toArray();
    return docs.map((doc) => ({ _id: doc._id, outbox: Object.values(doc.outbox ?? {}).sort(byRank), count: doc.outboxCount ?? 0 }));
  }

  /**
   * The events read are relayed: each document loses those of them it still holds, and its count
   * with them (a write adding events meanwhile keeps its own). One command for the batch.
   */
  async cleared(docs: HeldEvents[]): Promise<void> {
    if (docs.length === 0) return;
    await this.c.bulkWrite(docs.map(clearing<T>), { ordered: false });
  }
}

/**
 * The write that removes what was read of a document's outbox, if it still holds all of it (a
 * relay that overlapped this one may have removed some: the next pass reads what is left). A
 * count read without events (left by a write whose events were already there) is set to 0 if no
 * write came since.
 */
function clearing<T extends { _id: string } & WithOutbox>(doc: HeldEvents): AnyBulkWriteOperation<T> {
  if (doc.outbox.length === 0) {
    return { updateOne: { filter: { _id: doc._id, outboxCount: doc.count } as Filter<T>, update: { $set: { outboxCount: 0 } } as UpdateFilter<T> } };
  }
  const held = Object.fromEntries(doc.outbox.map((entry) => [`outbox.${entry.id}`, { $exists: true }]));
  const update: UpdateFilter<WithOutbox> = {
    $unset: Object.fromEntries(doc.outbox.map((entry) => [`outbox.${entry.id}`, ''])),
    $inc: { outboxCount: -doc.outbox.length },
  };
  return { updateOne: { filter: { _id: doc._id, ...held } as Filter<T>, update: update as UpdateFilter<T> } };
}

/** Every outbox of the store, in the order the relay reads them. */
export function outboxes(db: Db): OutboxReader[] {
  const c = collections(db);
  return [new Outbox('orders', c.orders), new Outbox('commands', c.commands), new Outbox('locations', c.locations), new Outbox('orderArchive', c.orderArchive)];
}
