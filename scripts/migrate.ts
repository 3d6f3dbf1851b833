/**
 * `npm run migrate`: runs the MongoDB migrations this checkout has and the deployment has not
 * (docs/upgrades.md#migrations), as the first worker of a release would when it starts; waits
 * while another process runs them. Configured by MONGO_URL and MONGO_DB, as the roles are.
 */
import { ConfigError, loadConfig } from '@pos/shared/config';
import { createLogger, stdoutLog } from '@pos/shared/log';
import { MIGRATIONS } from '@pos/shared/migrations/list';
import { appliedMigrations, runMigrations } from '@pos/shared/migrations/runner';
import { runMain } from '@pos/shared/process/shutdown';
import { connectMongo, ensureIndexes } from '@pos/shared/store/mongo';
import { LeasesRepo } from '@pos/shared/store/leases';

const config = loadConfig();
const log = createLogger(config.process.logLevel, 'pos-migrate', stdoutLog(0));

runMain(log, async () => {
  if (!config.mongo.url) throw new ConfigError('MONGO_URL must be set: the deployment whose MongoDB is migrated');
  const store = await connectMongo(config.mongo.url, config.mongo, { boundOperations: false });
  try {
    await ensureIndexes(store.db);
    const ran = await runMigrations(store.db, MIGRATIONS, { leases: new LeasesRepo(store.db), log });
    const applied = await appliedMigrations(store.db);
    log.info({ ran, applied: [...applied].sort() }, ran.length > 0 ? 'migrations run' : 'no migration pending');
  } finally {
    await store.close();
  }
});
