/**
 * Leases: which process does a job that one process at a time should do (the event relay, the
 * migrations), for a while. No clock but each process's own monotonic one: every renewal writes a
 * fresh `token`, and a contender takes a lease over only after it has seen the same holder and
 * token for a whole lease by its own clock; the holder, for its part, counts its lease from when
 * it sent the renewal. So a holder that stalled (SIGSTOP, a paused VM) finds its lease over before
 * anyone else could take it, and the holders' wall clocks need not agree.
 *
 * `until` is still written, from the writer's clock, for 0.5.0's processes, which compare it with
 * their own (during a roll); a change of it counts as a renewal.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Db } from 'mongodb';
import type { LeaseDoc } from './documents';
import { collections } from './mongo';
import { isDuplicateKey } from './store-errors';

/** What a contender saw of another's lease, and since when (its own monotonic clock). */
export interface Seen {
  key: string;
  since: number;
}

/**
 * A contender's verdict on another's lease, read as `key` at `now` (its monotonic clock): take it
 * over once it has seen the same key for a whole lease; otherwise wait, remembering what it saw
 * and since when (a new key starts the count again).
 */
export function contend(
  seen: Seen | undefined,
  key: string,
  now: number,
  ms: number,
): { take: true } | { take: false; seen: Seen } {
  if (seen?.key !== key) return { take: false, seen: { key, since: now } };
  return now - seen.since >= ms ? { take: true } : { take: false, seen };
}

const keyOf = (doc: LeaseDoc): string => `${doc.holder}\n${doc.token ?? ''}\n${doc.until.getTime()}`;

export class LeasesRepo {
  private readonly c;
  private readonly seen = new Map<string, Seen>();

  constructor(db: Db) {
    this.c = collections(db).leases;
  }

  /**
   * Takes or renews the lease `name` for `holder`, for `ms`. Returns until when (by
   * `performance.now()`) the holder may act on it, or undefined while another holds it.
   */
  async hold(name: string, holder: string, ms: number): Promise<number | undefined> {
    const sent = performance.now();
    const renewal = { holder, token: randomUUID(), until: new Date(Date.now() + ms) };
    if ((await this.c.updateOne({ _id: name, holder }, { $set: renewal })).matchedCount > 0) return sent + ms;
    const doc = await this.c.findOne({ _id: name });
    if (!doc) {
      try {
        await this.c.insertOne({ _id: name, ...renewal });
        return sent + ms;
      } catch (err) {
        if (isDuplicateKey(err)) return undefined; // another took it first
        throw err;
      }
    }
    const verdict = contend(this.seen.get(name), keyOf(doc), performance.now(), ms);
    if (!verdict.take) {
      this.seen.set(name, verdict.seen);
      return undefined;
    }
    // unrenewed for a whole lease: taken over, unless it was renewed meanwhile
    const takenAt = performance.now();
    const { matchedCount } = await this.c.updateOne(
      { _id: name, holder: doc.holder, until: doc.until, token: doc.token ?? { $exists: false } },
      { $set: renewal },
    );
    this.seen.delete(name);
    return matchedCount > 0 ? takenAt + ms : undefined;
  }

  /** Gives the lease up (at shutdown), if `holder` has it. */
  async release(name: string, holder: string): Promise<void> {
    await this.c.deleteOne({ _id: name, holder });
  }
}
