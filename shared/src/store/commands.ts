import type { Db } from 'mongodb';
import type { CommandKind } from '../domain/commands';
import type { CommandDoc } from '../domain/records';
import { collections, recordId } from './mongo';
import { asString } from './query-values';

export interface NewCommand {
  locationId: string;
  number: number;
  kind: CommandKind;
  tableNumber?: number;
  /** The customer session that asked for it; absent for the operator's. */
  sessionId?: string;
  idempotencyId?: string;
}

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

  /** Up to `limit` of the session's live commands, soonest to expire first. */
  liveOfSession(sessionId: string, now: Date, limit: number): Promise<CommandDoc[]> {
    return this.c
      .find({ sessionId: asString(sessionId, 'sessionId'), expiresAt: { $gt: now } })
      .sort({ expiresAt: 1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Acknowledges (removes) a live command and returns it; null when there is no such live
   * command. Of two concurrent acknowledgements only the one whose delete counts wins.
   */
  async acknowledge(locationId: string, number: number, now: Date): Promise<CommandDoc | null> {
    const filter = { _id: recordId(locationId, number), expiresAt: { $gt: now } };
    const command = await this.c.findOne(filter);
    if (!command) return null;
    const { deletedCount } = await this.c.deleteOne(filter);
    return deletedCount === 1 ? command : null;
  }
}
