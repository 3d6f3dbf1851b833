/**
 * The applied-jobs ledger: the ids of jobs applied to an order that the order no longer holds
 * itself. An order keeps its newest applied job ids (store/orders.ts); once it holds twice
 * APPLIED_JOBS_KEPT, the write that adds the next moves all but the newest APPLIED_JOBS_KEPT here
 * first, in one insert. So whether a job wrote an order is known for as long as a retry of it can
 * come (IDEMPOTENCY_TTL), however many writes the order had since: a keyed retry whose record
 * Redis lost, after a hundred other reports on the same order, is still recognised.
 */
import { type Db, MongoServerError } from 'mongodb';
import type { AppliedJobsDoc } from './documents';
import { collections, deleteDue } from './mongo';

/** An applied-job entry is the job id, then `~` and a mark of the attempt (store/orders.ts). */
export const ATTEMPT_MARK = '~';

/** The job id of an entry among an order's applied jobs. */
export function jobIdOf(entry: string): string {
  const mark = entry.indexOf(ATTEMPT_MARK);
  return mark < 0 ? entry : entry.slice(0, mark);
}

export class AppliedJobsLedger {
  private readonly c;

  constructor(
    db: Db,
    /** How long a moved entry is kept: as long as a retry of its job can come (IDEMPOTENCY_TTL). */
    private readonly keptMs: number,
  ) {
    this.c = collections(db).appliedJobs;
  }

  /**
   * Keeps the entries an order at this version is about to drop. The document's id is the order's
   * and its version, so every writer racing from that version keeps the same entries once.
   */
  async keep(order: { _id: string; version: number }, entries: readonly string[], now: Date): Promise<void> {
    const doc: AppliedJobsDoc = {
      _id: `${order._id}@${order.version}`,
      orderId: order._id,
      jobs: entries.map(jobIdOf),
      expireAt: new Date(now.getTime() + this.keptMs),
    };
    try {
      await this.c.insertOne(doc);
    } catch (err) {
      if (!(err instanceof MongoServerError && err.code === 11000)) throw err;
    }
  }

  /** Whether the order's moved entries hold `jobId` (one read of the `{orderId, jobs}` index). */
  async has(orderId: string, jobId: string): Promise<boolean> {
    return (await this.c.findOne({ orderId, jobs: jobId }, { projection: { _id: 1 } })) !== null;
  }

  /** What the TTL index does, where no TTL monitor runs (the lifecycle job calls it). */
  purge(now: Date, limit: number): Promise<number> {
    return deleteDue(this.c, 'expireAt', now, limit);
  }
}
