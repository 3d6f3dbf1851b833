/**
 * Leases: which process does a job that one process at a time should do (the event relay), for a
 * while. A holder renews its lease before it lapses; one that stops (dies, hangs) loses it when it
 * lapses, and another takes it over. A lease is an efficiency, never what correctness rests on: a
 * holder that wakes after losing its lease and works on is harmless (the event log records each
 * event once, in order).
 */
import type { Db } from 'mongodb';
import { collections } from './mongo';
import { isDuplicateKey } from './store-errors';

export class LeasesRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).leases;
  }

  /** Takes or renews the lease `name` for `holder` until `until`; false while another holds it. */
  async hold(name: string, holder: string, now: Date, until: Date): Promise<boolean> {
    try {
      const { matchedCount, upsertedCount } = await this.c.updateOne(
        { _id: name, $or: [{ holder }, { until: { $lte: now } }] },
        { $set: { holder, until } },
        { upsert: true },
      );
      return matchedCount + upsertedCount > 0;
    } catch (err) {
      // held by another: the upsert collided with its document
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** Gives the lease up (at shutdown), if `holder` has it. */
  async release(name: string, holder: string): Promise<void> {
    await this.c.deleteOne({ _id: name, holder });
  }
}
