/**
 * The outboxes: the collections whose writes record their events in the changed document
 * (orders, commands, locations; see events/outbox.ts), and the order archive, where an order
 * archived before its events were relayed takes them. The relay reads what they hold and, once
 * the events are recorded in the event log, clears each document's outbox as it read it.
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter, UpdateFilter } from 'mongodb';
import type { OutboxEntry, WithOutbox } from './documents';
import { collections } from './mongo';

/** The events a write implies, given the document as the write leaves it (events/outbox.ts makes them). */
export type EventsOf<T> = (after: T) => OutboxEntry[];
export const NO_EVENTS = (): OutboxEntry[] => [];

/** A document's events waiting to be relayed. */
export interface HeldEvents {
  _id: string;
  outbox: OutboxEntry[];
}

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

  /** Up to `limit` documents holding events (the sparse index on `outbox.id`). */
  async held(limit: number): Promise<HeldEvents[]> {
    const docs = await this.c.find({ 'outbox.id': { $exists: true } } as Filter<T>, { projection: { outbox: 1 } }).limit(limit).toArray();
    return docs.flatMap((doc) => (Array.isArray(doc.outbox) && doc.outbox.length > 0 ? [{ _id: doc._id, outbox: doc.outbox }] : []));
  }

  /**
   * The events read are relayed: each document's outbox is cleared if it still holds exactly what
   * was read. One that gained events meanwhile keeps them all, and the next pass relays them (the
   * ones relayed already are found recorded). One command.
   */
  async cleared(docs: HeldEvents[]): Promise<void> {
    if (docs.length === 0) return;
    const unset: UpdateFilter<WithOutbox> = { $unset: { outbox: '' } };
    const clear = (doc: HeldEvents): AnyBulkWriteOperation<T> => ({ updateOne: { filter: { _id: doc._id, outbox: doc.outbox } as Filter<T>, update: unset as UpdateFilter<T> } });
    await this.c.bulkWrite(docs.map(clear), { ordered: false });
  }
}

/** Every outbox of the store, in the order the relay reads them. */
export function outboxes(db: Db): OutboxReader[] {
  const c = collections(db);
  return [new Outbox('orders', c.orders), new Outbox('commands', c.commands), new Outbox('locations', c.locations), new Outbox('orderArchive', c.orderArchive)];
}
