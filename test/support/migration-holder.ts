/**
 * A process that runs one slow migration (test/integration/migrations.test.ts stalls it with SIGSTOP):
 * `marking(who)` writes a mark `<who>-<i>` every second, MARKS times, checking its lease before each.
 * Env: TEST_MONGO_URL, MIGRATION_DB, LEASE_MS.
 */
import { MongoClient, type Db } from 'mongodb';
import { createLogger } from '@pos/shared/log';
import { type Migration, runMigrations } from '@pos/shared/migrations/runner';
import { LeasesRepo } from '@pos/shared/store/leases';

export const MARKS = 6;

export function marking(who: string): Migration {
  return {
    id: '0.6.0-slow',
    description: 'writes a mark a second',
    async up(db: Db, _log, lease) {
      for (let i = 0; i < MARKS; i++) {
        lease.check();
        await db.collection<{ _id: string; at: Date }>('marks').insertOne({ _id: `${who}-${i}`, at: new Date() });
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      return MARKS;
    },
  };
}

if (require.main === module) {
  void (async () => {
    const client = await MongoClient.connect(process.env.TEST_MONGO_URL!);
    const log = createLogger('info', 'migration-holder');
    await runMigrations(client.db(process.env.MIGRATION_DB), [marking('a')], {
      leases: new LeasesRepo(client.db(process.env.MIGRATION_DB)),
      log,
      leaseMs: Number(process.env.LEASE_MS),
    });
    await client.close();
  })();
}
