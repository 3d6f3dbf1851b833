import type { Db } from 'mongodb';
import type { CommandDoc } from './documents';
import { collections, deleteDue, recordId } from './mongo';
import { type EventsOf, NO_EVENTS, outboxOfNew, withOutbox } from './outboxes';
import { asInteger, asString } from './query-values';

/** What the creator says; the repo adds the id and the times. */
export type NewCommand = Pick<
  CommandDoc,
  'locationId' | 'number' | 'kind' | 'tableNumber' | 'sessionId' | 'idempotencyId'
>;

/**
 * How long a command stays stored after it expires: its events are relayed (seconds) long before,
 * and an acknowledged one is kept as one (not live) meanwhile.
 */
const KEPT_AFTER_EXPIRY_MS = 24 * 60 * 60 * 1000;

/** What a live command is: neither expired nor acknowledged. */
const live = (now: Date) => ({ expiresAt: { $gt: now }, acknowledgedAt: { $exists: false } });

export class CommandsRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).commands;
  }

  /** Inserts a new command, with the events its creation implies in its outbox. */
  async insert(
    command: NewCommand,
    now: Date,
    ttlMs: number,
    events: EventsOf<CommandDoc> = NO_EVENTS,
  ): Promise<CommandDoc> {
    const expiresAt = new Date(now.getTime() + ttlMs);
    const doc: CommandDoc = {
      _id: recordId(command.locationId, command.number),
      createdAt: now,
      expiresAt,
      purgeAt: new Date(expiresAt.getTime() + KEPT_AFTER_EXPIRY_MS),
      ...command,
    };
    await this.c.insertOne({ ...doc, ...outboxOfNew(events(doc)) });
    return doc;
  }

  /** The command a request with an Idempotency-Key created, if it did. */
  findCreatedBy(locationId: string, idempotencyId: string): Promise<CommandDoc | null> {
    return this.c.findOne({ locationId, idempotencyId });
  }

  /**
   * Live commands numbered above `after`, ascending, at most `limit`: a range of the `{locationId, number}` index.
   */
  listLive(locationId: string, now: Date, after = 0, limit?: number): Promise<CommandDoc[]> {
    const cursor = this.c
      .find({
        locationId: asString(locationId, 'locationId'),
        number: { $gt: asInteger(after, 'after') },
        ...live(now),
      })
      .sort({ number: 1 });
    return (limit ? cursor.limit(limit) : cursor).toArray();
  }

  /** Up to `limit` of the session's live commands, soonest to expire first. */
  liveOfSession(locationId: string, sessionId: string, now: Date, limit: number): Promise<CommandDoc[]> {
    return this.c
      .find({
        locationId: asString(locationId, 'locationId'),
        sessionId: asString(sessionId, 'sessionId'),
        ...live(now),
      })
      .sort({ expiresAt: 1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Removes up to `limit` commands past their keeping (a day after they expired). MongoDB's TTL
   * index on `purgeAt` does the same in the background; this is for where no TTL monitor runs.
   */
  purgeExpired(now: Date, limit: number): Promise<number> {
    return deleteDue(this.c, 'purgeAt', now, limit);
  }

  /**
   * Acknowledges a live command: it stops being live, and the write records the acknowledgement's
   * events (`events` of the command) in its outbox. Returns the command; null when there is no
   * such live command. Of two concurrent acknowledgements only the one whose write counts wins.
   */
  async acknowledge(
    locationId: string,
    number: number,
    now: Date,
    events: EventsOf<CommandDoc> = NO_EVENTS,
  ): Promise<CommandDoc | null> {
    const filter = { _id: recordId(locationId, number), locationId, number, ...live(now) };
    const command = await this.c.findOne(filter);
    if (!command) return null;
    const after: CommandDoc = { ...command, acknowledgedAt: now };
    const { modifiedCount } = await this.c.updateOne(
      filter,
      withOutbox({ $set: { acknowledgedAt: now } }, events(after)),
    );
    return modifiedCount === 1 ? after : null;
  }
}
