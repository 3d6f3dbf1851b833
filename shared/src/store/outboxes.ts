/**
 * The outboxes: the collections whose writes record their events in the changed document
 * (orders, commands, locations; see events/outbox.ts), and the order archive, where an order
 * archived before its events were recorded takes them. A document's `outbox` holds its events by
 * id. A write adds them with `$set` of their ids and `$inc` of `outboxCount`, by which the relay
 * finds the document; once they are in the event log the relay removes exactly those it read, so a
 * document written again while the relay works keeps only its new events, however hot it is.
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

/** A document's events for the relay, in the order of its writes. */
export interface HeldEvents {
  _id: string;
  outbox: OutboxEntry[];
  /** `outboxCount` as read. */
  count: number;
  /** `outboxDue` as read (Compat: see HOLDING). */
  due?: Date;
}

/** The order of one document's events: by the version its write left, then by place in the write. */
const byRank = (a: OutboxEntry, b: OutboxEntry) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1];

/** The events a document holds, in the order of its writes. */
export const inRankOrder = (outbox: WithOutbox['outbox']): OutboxEntry[] => Object.values(outbox ?? {}).sort(byRank);

/**
 * Documents holding events for the relay (the partial indexes on `outboxCount` and `outboxDue`).
 * Compat: a 0.5.0 worker that relays takes its writes' events over (`outboxCount` 0, `outboxDue`
 * set) and hands them to its own relay; should it stop first, they wait in the document, so this
 * release reads them at once, whatever their due time. Goes with the release after 0.6.0, with a
 * migration that finds no `outboxDue` left.
 */
const HOLDING = { $or: [{ outboxCount: { $gt: 0 } }, { outboxDue: { $exists: true } }] };
const HELD_FIELDS = { outbox: 1, outboxCount: 1, outboxDue: 1 } as const;
/** What names, in a read of every outbox at once, the outbox a document came from. */
const FROM = 'relayOutbox';

type HeldDoc = { _id: string } & WithOutbox;

function heldEvents(doc: HeldDoc): HeldEvents {
  return {
    _id: doc._id,
    outbox: inRankOrder(doc.outbox),
    count: doc.outboxCount ?? 0,
    ...(doc.outboxDue ? { due: doc.outboxDue } : {}),
  };
}

/** One collection's outbox: what the relay reads of it and clears (its outbox fields only). */
export class Outbox {
  constructor(
    /** The collection's name, for logs and metrics. */
    readonly name: string,
    readonly collection: Collection<HeldDoc>,
  ) {}

  /** The stages that read up to `limit` documents holding events for the relay (see HOLDING), tagged with `index`. */
  stages(limit: number, index: number): Document[] {
    return [{ $match: HOLDING }, { $limit: limit }, { $project: HELD_FIELDS }, { $addFields: { [FROM]: index } }];
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
  held(limit: number): Promise<{ outbox: Pick<Outbox, 'name' | 'cleared'>; docs: HeldEvents[] }[]>;
}

/**
 * Every outbox of the store, read in one command: the first collection's documents and, by
 * `$unionWith`, the others', each up to the limit. A relay pass under a steady flow finds events
 * in one or two of them; reading each apart cost a round trip per collection per pass, the
 * larger part of the relay's commands.
 */
export class Outboxes implements OutboxesReader {
  constructor(readonly all: Outbox[]) {}

  async held(limit: number): Promise<{ outbox: Outbox; docs: HeldEvents[] }[]> {
    const [first, ...rest] = this.all;
    if (!first) return [];
    const pipeline = [
      ...first.stages(limit, 0),
      ...rest.map((outbox, i) => ({
        $unionWith: { coll: outbox.collection.collectionName, pipeline: outbox.stages(limit, i + 1) },
      })),
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
 * 0.5.0 writer took its events over since (`outboxDue` as read). `outboxCount` goes down by the count
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
  const filter =
    doc.outbox.length === 0
      ? { _id: doc._id, outboxCount: doc.count, ...unchanged }
      : { _id: doc._id, ...held, ...unchanged };
  return { updateOne: { filter: filter as Filter<HeldDoc>, update: update as UpdateFilter<HeldDoc> } };
}

/** Every outbox of the store, in the order the relay reads them. */
export function outboxes(db: Db): Outboxes {
  const c = collections(db);
  const outbox = (name: string, { collectionName }: { collectionName: string }) =>
    new Outbox(name, db.collection<HeldDoc>(collectionName));
  return new Outboxes([
    outbox('orders', c.orders),
    outbox('commands', c.commands),
    outbox('locations', c.locations),
    outbox('orderArchive', c.orderArchive),
  ]);
}
