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
    const left = new Map<string, number>();
    const unrecorded = async () => {
      left.clear();
      for (const name of OUTBOXES) {
        const docs = await db.db
          .collection<WithOutbox>(name)
          .find({ $or: [{ outboxCount: { $gt: 0 } }, { outboxDue: { $exists: true } }] })
          .toArray();
        const waiting = docs.filter((doc) => (doc.outboxCount ?? 0) > 0).length;
        const ids = docs.flatMap((doc) => Object.keys(doc.outbox ?? {}));
        const unlogged =
          ids.length > 0
            ? ids.length - (await db.db.collection('events').countDocuments({ eventId: { $in: ids } }))
            : 0;
        if (waiting + unlogged > 0) left.set(name, waiting + unlogged);
      }
      return left.size;
    };
    await eventually(
      async () => (await unrecorded()) === 0,
      'the outboxes relayed',
      timeoutMs,
      () => `left (documents waiting and events not logged, by outbox): ${JSON.stringify(Object.fromEntries(left))}`,
    );
  } finally {
    await db.close();
  }
}
