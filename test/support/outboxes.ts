/**
 * Waiting for the events the outboxes hold to be in the event log: those left to the relay (it
 * records and removes them), and those an order transition's writer took over (recorded by it, or
 * by its job's re-run, and removed by the order's next write).
 */
import type { WithOutbox } from '@pos/shared/store/documents';
import type { StackEnv } from './stack';
import { openDb } from './fixtures';
import { eventually } from './wait';

const OUTBOXES = ['orders', 'commands', 'locations', 'orderArchive'];

export async function outboxesRelayed(env: StackEnv, timeoutMs?: number): Promise<void> {
  const db = await openDb(env);
  try {
    const unrecorded = async () => {
      let left = 0;
      for (const name of OUTBOXES) {
        const docs = await db.db.collection<WithOutbox>(name).find({ $or: [{ outboxCount: { $gt: 0 } }, { outboxDue: { $exists: true } }] }).toArray();
        left += docs.filter((doc) => (doc.outboxCount ?? 0) > 0).length;
        const ids = docs.flatMap((doc) => Object.keys(doc.outbox ?? {}));
        if (ids.length > 0) left += ids.length - (await db.db.collection('events').countDocuments({ eventId: { $in: ids } }));
      }
      return left;
    };
    await eventually(async () => (await unrecorded()) === 0, 'the outboxes relayed', timeoutMs);
  } finally {
    await db.close();
  }
}
