/** Waiting for the event relay: every outbox of a deployment empty (its events recorded in the event log). */
import type { StackEnv } from './stack';
import { openDb } from './fixtures';
import { eventually } from './wait';

export async function outboxesRelayed(env: StackEnv, timeoutMs?: number): Promise<void> {
  const db = await openDb(env);
  try {
    const held = async () => {
      const counts = await Promise.all(['orders', 'commands', 'locations'].map((name) => db.db.collection(name).countDocuments({ outboxCount: { $gt: 0 } })));
      return counts.reduce((a, b) => a + b, 0);
    };
    await eventually(async () => (await held()) === 0, 'the outboxes relayed', timeoutMs);
  } finally {
    await db.close();
  }
}
