/**
 * The outboxes: the collections whose writes record their events in the changed document
 * (orders, commands, locations; see events/outbox.ts), and the order archive, where an order
 * archived before its events were recorded takes them. A document's `outbox` holds its events by
 * id. Two kinds of write add them:
 *
 * - most leave them to the relay: `$set` of their ids and `$inc` of `outboxCount`, by which the
 *   relay finds the document; once they are in the event log it removes exactly those it read, so
 *   a document written again while the relay works keeps only its new events, however hot it is;
 * - an order transition written by the worker that holds the relay's lease takes over every
 *   event the document holds (`outboxCount` 0, `outboxDue` set) and removes those that worker
 *   knows are recorded; it hands the rest to its relay's next pass (the worker's
 *   outbox/taken-events.ts). The order's next write removes them, so a change costs one write of
 *   the order, not the change's and then the relay's clear. The relay reads such a document only
 *   once `outboxDue` passed without another write, and then removes them; and a relay that takes
 *   the lease over reads them all at once (their taker may have died before its pass).
 */
import type { AnyBulkWriteOperation, Collection, Db, Document, Filter, UpdateFilter } from 'mongodb';
import type { OutboxEntry, WithOutbox } from './documents';
import { collections } from './mongo';

/** The events a write implies, given the document as the write leaves it (events/outbox.ts makes them). */
export type EventsOf<T> = (after: T) => OutboxEntry[];
export const NO_EVENTS = (): OutboxEntry[] => [];

/**
 * An object keyed by event ids (or paths made of them), as a dictionary from the start: the ids are
 * each new, and an ordinary object would have V8 make a hidden class for every one. `from`'s
 * fields are copied in first.
 */
function dictionary<T>(from?: object): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, from);
}

/** The outbox fields of a document inserted with `entries` (none when there are none). */
export function outboxOfNew(entries: OutboxEntry[]): WithOutbox {
  return entries.length === 0 ? {} : outboxAfter({}, entries);
}

/** An update of a document with `entries` added to its outbox, in the same write. */
export function withOutbox<U extends { $set?: object; $inc?: object }>(update: U, entries: OutboxEntry[]): U {
  if (entries.length === 0) return update;
  const set = dictionary<unknown>(update.$set);
  for (const entry of entries) set[`outbox.${entry.id}`] = entry;
  return { ...update, $set: set, $inc: { ...update.$inc, outboxCount: entries.length } };
}

/** The outbox fields of a document after a write that added `entries` with `withOutbox`. */
export function outboxAfter(held: WithOutbox, entries: OutboxEntry[]): WithOutbox {
  if (entries.length === 0) return {};
  const outbox = dictionary<OutboxEntry>(held.outbox);
  for (const entry of entries) outbox[entry.id] = entry;
  return { outbox, outboxCount: (held.outboxCount ?? 0) + entries.length };
}

/** A write that takes a document's events over from the relay (see the top of this file). */
export interface TakeOver {
  /** Those of the events it holds known to be in the event log: the write removes them. */
  recorded: readonly string[];
}

/**
 * How long events taken over by a transition's write (`withTakenOutbox`) stay in the order before
 * the relay reads them and removes them: long enough that an order changed again within minutes
 * has them removed by that write rather than by a write of the relay's. (Their recording does not
 * wait for this: the taker's relay records them at its next pass, and a relay that takes the
 * lease over reads every taken event at once.)
 */
export const TAKEN_OUTBOX_DUE_MS = 5 * 60_000;

/**
 * An update that adds `entries` to a document and takes its events over from the relay (see the
 * top of this file), removing those of `held` (what the document holds, as read) in `recorded`.
 * Only for a write guarded by the document's version, so that `held` is all it holds. Returns
 * the update and the document's outbox fields after it.
 */
export function withTakenOutbox<U extends { $set?: object }>(
  update: U,
  held: WithOutbox['outbox'],
  entries: OutboxEntry[],
  recorded: readonly string[],
  due: Date,
): { update: U & { $unset?: Record<string, ''> }; after: Required<Pick<WithOutbox, 'outbox' | 'outboxCount'>> & Pick<WithOutbox, 'outboxDue'> } {
  const outbox = dictionary<OutboxEntry>();
  const set = dictionary<unknown>(update.$set);
  const unset = dictionary<''>();
  const gone = new Set(recorded);
  for (const id in held) {
    if (gone.has(id)) unset[`outbox.${id}`] = '';
    else outbox[id] = held[id]!;
  }
  for (const entry of entries) {
    outbox[entry.id] = entry;
    set[`outbox.${entry.id}`] = entry;
  }
  const holds = Object.keys(outbox).length > 0;
  set.outboxCount = 0;
  if (holds) set.outboxDue = due;
  else unset.outboxDue = '';
  const unsets = Object.keys(unset).length > 0;
  return {
    update: { ...update, $set: set, ...(unsets ? { $unset: unset } : {}) },
    after: { outbox, outboxCount: 0, ...(holds ? { outboxDue: due } : {}) },
  };
}

/** A document's events for the relay, in the order of its writes. */
export interface HeldEvents {
  _id: string;
  outbox: OutboxEntry[];
  /** `outboxCount` as read. */
  count: number;
  /** `outboxDue` as read, when a writer had taken the events over. */
  due?: Date;
}

/** The order of one document's events: by the version its write left, then by place in the write. */
const byRank = (a: OutboxEntry, b: OutboxEntry) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1];

/** The events a document holds, in the order of its writes. */
export const inRankOrder = (outbox: WithOutbox['outbox']): OutboxEntry[] => Object.values(outbox ?? {}).sort(byRank);

/**
 * Documents holding events for the relay: left to it, or taken over by a write and due by
 * `dueBy` (the partial indexes on `outboxCount` and `outboxDue`).
 */
const holding = (dueBy: Date) => ({ $or: [{ outboxCount: { $gt: 0 } }, { outboxDue: { $lte: dueBy } }] });
const HELD_FIELDS = { outbox: 1, outboxCount: 1, outboxDue: 1 } as const;
/** What names, in a read of every outbox at once, the outbox a document came from. */
const FROM = 'relayOutbox';

type HeldDoc = { _id: string } & WithOutbox;

function heldEvents(doc: HeldDoc): HeldEvents {
  return { _id: doc._id, outbox: inRankOrder(doc.outbox), count: doc.outboxCount ?? 0, ...(doc.outboxDue ? { due: doc.outboxDue } : {}) };
}

/** One collection's outbox: what the relay reads of it and clears (its outbox fields only). */
export class Outbox {
  constructor(
    /** The collection's name, for logs and metrics. */
    readonly name: string,
    readonly collection: Collection<HeldDoc>,
  ) {}

  /** The stages that read up to `limit` documents holding events for the relay (see `holding`), tagged with `index`. */
  stages(limit: number, dueBy: Date, index: number): Document[] {
    return [{ $match: holding(dueBy) }, { $limit: limit }, { $project: HELD_FIELDS }, { $addFields: { [FROM]: index } }];
  }

  /**
   * The events read are relayed: each document loses those of them it still holds, and its count
   * with them (a write adding events meanwhile keeps its own). One command for the batch.
   */
  async cleared(docs: HeldEvents[]): Promise<void> {
    if (docs.length === 0) return;
    await this.collection.bulkWrite(docs.map(clearing), { ordered: false });
  }
}

/** What the relay reads of every outbox: up to a limit of each. */
export interface OutboxesReader {
  held(limit: number, dueBy: Date): Promise<{ outbox: Pick<Outbox, 'name' | 'cleared'>; docs: HeldEvents[] }[]>;
}

/**
 * Every outbox of the store, read in one command: the first collection's documents and, by
 * `$unionWith`, the others', each up to the limit. A relay pass under a steady flow finds events
 * in one or two of them; reading each apart cost a round trip per collection per pass, the
 * larger part of the relay's commands.
 */
export class Outboxes implements OutboxesReader {
  constructor(readonly all: Outbox[]) {}

  async held(limit: number, dueBy: Date): Promise<{ outbox: Outbox; docs: HeldEvents[] }[]> {
    const [first, ...rest] = this.all;
    if (!first) return [];
    const pipeline = [
      ...first.stages(limit, dueBy, 0),
      ...rest.map((outbox, i) => ({ $unionWith: { coll: outbox.collection.collectionName, pipeline: outbox.stages(limit, dueBy, i + 1) } })),
    ];
    const found = await first.collection.aggregate<HeldDoc & { [FROM]: number }>(pipeline).toArray();
    const held = this.all.map((outbox) => ({ outbox, docs: [] as HeldEvents[] }));
    for (const doc of found) held[doc[FROM]]?.docs.push(heldEvents(doc));
    return held;
  }
}

/**
 * The write that removes what was read of a document's outbox, if it still holds all of it (a
 * relay that overlapped this one may have removed some: the next pass reads what is left) and no
 * writer took its events over since (`outboxDue` as read). `outboxCount` goes down by the count
 * read: a write that added events meanwhile keeps its own, and a count read without events (left
 * by a write whose events were already there) goes back to 0.
 */
function clearing(doc: HeldEvents): AnyBulkWriteOperation<HeldDoc> {
  const unchanged = { outboxDue: doc.due ?? { $exists: false } };
  const held = Object.fromEntries(doc.outbox.map((entry) => [`outbox.${entry.id}`, { $exists: true }]));
  const unset = [...doc.outbox.map((entry) => `outbox.${entry.id}`), ...(doc.due ? ['outboxDue'] : [])];
  const update: UpdateFilter<WithOutbox> = {
    ...(unset.length > 0 ? { $unset: Object.fromEntries(unset.map((path) => [path, ''])) } : {}),
    ...(doc.count > 0 ? { $inc: { outboxCount: -doc.count } } : {}),
  };
  const filter = doc.outbox.length === 0 ? { _id: doc._id, outboxCount: doc.count, ...unchanged } : { _id: doc._id, ...held, ...unchanged };
  return { updateOne: { filter: filter as Filter<HeldDoc>, update: update as UpdateFilter<HeldDoc> } };
}

/** Every outbox of the store, in the order the relay reads them. */
export function outboxes(db: Db): Outboxes {
  const c = collections(db);
  const outbox = (name: string, { collectionName }: { collectionName: string }) => new Outbox(name, db.collection<HeldDoc>(collectionName));
  return new Outboxes([outbox('orders', c.orders), outbox('commands', c.commands), outbox('locations', c.locations), outbox('orderArchive', c.orderArchive)]);
}
