import type { Db } from 'mongodb';
import type { CommandKind } from '../domain/commands';
import type { CommandDoc } from '../domain/records';
import { collections, recordId } from './mongo';

export interface NewCommand {
  locationId: string;
  number: number;
  kind: CommandKind;
  tableNumber?: number;
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

  /** Live commands numbered above `after`, ascending. */
  listLive(locationId: string, now: Date, after = 0): Promise<CommandDoc[]> {
    return this.c
      .find({ locationId, number: { $gt: after }, expiresAt: { $gt: now } })
      .sort({ number: 1 })
      .toArray();
  }

  /**
   * Removes up to `limit` expired commands (reads already leave them out). MongoDB's TTL index
   * does the same in the background; this is for where no TTL monitor runs.
   */
  async purgeExpired(now: Date, limit: number): Promise<number> {
    const due = await this.c.find({ expiresAt: { $lte: now } }, { projection: { _id: 1 } }).limit(limit).toArray();
    if (due.length === 0) return 0;
    const { deletedCount } = await this.c.deleteMany({ _id: { $in: due.map((d) => d._id) }, expiresAt: { $lte: now } });
    return deletedCount;
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
