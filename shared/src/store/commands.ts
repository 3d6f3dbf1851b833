import type { Db } from 'mongodb';
import type { CommandDoc } from './documents';
import { collections, deleteDue, recordId } from './mongo';
import { asInteger, asString } from './query-values';

/** What the creator says; the repo adds the id and the times. */
export type NewCommand = Pick<
  CommandDoc,
  'locationId' | 'number' | 'kind' | 'tableNumber' | 'sessionId' | 'idempotencyId'
>;

export class CommandsRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).commands;
  }

  async insert(command: NewCommand, now: Date, ttlMs: number): Promise<CommandDoc> {
    const doc: CommandDoc = {
      _id: recordId(command.locationId, command.number),
      createdAt: now,
      expiresAt: new Date(now.getTime() + ttlMs),
      ...command,
    };
    await this.c.insertOne(doc);
    return doc;
  }

  /** The command a request with an Idempotency-Key created, if it did. */
  findCreatedBy(locationId: string, idempotencyId: string): Promise<CommandDoc | null> {
    return this.c.findOne({ locationId, idempotencyId });
  }

  /** Live commands numbered above `after`, ascending, at most `limit`: a range of the `{locationId, number}` index. */
  listLive(locationId: string, now: Date, after = 0, limit?: number): Promise<CommandDoc[]> {
    const cursor = this.c
      .find({ locationId: asString(locationId, 'locationId'), number: { $gt: asInteger(after, 'after') }, expiresAt: { $gt: now } })
      .sort({ number: 1 });
    return (limit ? cursor.limit(limit) : cursor).toArray();
  }

  /** Up to `limit` of the session's live commands, soonest to expire first. */
  liveOfSession(locationId: string, sessionId: string, now: Date, limit: number): Promise<CommandDoc[]> {
    return this.c
      .find({ locationId: asString(locationId, 'locationId'), sessionId: asString(sessionId, 'sessionId'), expiresAt: { $gt: now } })
      .sort({ expiresAt: 1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Removes up to `limit` expired commands (reads already leave them out). MongoDB's TTL index
   * does the same in the background; this is for where no TTL monitor runs.
   */
  purgeExpired(now: Date, limit: number): Promise<number> {
    return deleteDue(this.c, 'expiresAt', now, limit);
  }

  /**
   * Acknowledges (removes) a live command and returns it; null when there is no such live
   * command. Of two concurrent acknowledgements only the one whose delete counts wins.
   */
  async acknowledge(locationId: string, number: number, now: Date): Promise<CommandDoc | null> {
    const filter = { _id: recordId(locationId, number), locationId, number, expiresAt: { $gt: now } };
    const command = await this.c.findOne(filter);
    if (!command) return null;
    const { deletedCount } = await this.c.deleteOne(filter);
    return deletedCount === 1 ? command : null;
  }
}
