/**
 * The migration runner (shared/src/migrations/runner.ts) on MongoDB (the stand-in, or MONGO_URL):
 * each migration once per deployment, whichever of the processes starting together takes the
 * lease; and each migration of the list on documents as the release before wrote them.
 */
import path from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { createLogger } from '@pos/shared/log';
import { auditFullHashes } from '@pos/shared/migrations/audit-full-hashes';
import { deliveryLogLocations } from '@pos/shared/migrations/delivery-log-locations';
import { appliedMigrations, type Migration, MigrationLease, runMigrations } from '@pos/shared/migrations/runner';
import { AuditRepo } from '@pos/shared/store/audit';
import { LeasesRepo } from '@pos/shared/store/leases';
import { ensureIndexes } from '@pos/shared/store/mongo';
import { signalGroup, spawnGroup } from '../../scripts/embedded/process-group';
import { MARKS, marking } from '../support/migration-holder';
import { eventually } from '../support/wait';

const log = createLogger('silent', 'test');

describe('migrations', () => {
  let client: MongoClient;
  let db: Db;
  beforeAll(async () => {
    client = await MongoClient.connect(process.env.TEST_MONGO_URL!);
  });
  beforeEach(async () => {
    db = client.db(`migrations-${process.pid}-${Date.now()}`);
    await ensureIndexes(db);
  });
  afterAll(() => client.close());

  it('runs each migration once, in order, whichever of the processes starting together holds the lease; the others wait for them', async () => {
    const runs: string[] = [];
    const slow = (id: string): Migration => ({
      id,
      description: id,
      up: async () => {
        runs.push(id);
        await new Promise((resolve) => setTimeout(resolve, 300));
        return 1;
      },
    });
    const list = [slow('0.5.0-a'), slow('0.5.0-b')];
    const ran = await Promise.all([1, 2, 3].map(() => runMigrations(db, list, { leases: new LeasesRepo(db), log })));
    expect(runs).toEqual(['0.5.0-a', '0.5.0-b']);
    expect(ran.filter((ids) => ids.length > 0)).toEqual([['0.5.0-a', '0.5.0-b']]);
    expect([...(await appliedMigrations(db))].sort()).toEqual(['0.5.0-a', '0.5.0-b']);
    // a later start runs none
    expect(await runMigrations(db, list, { leases: new LeasesRepo(db), log })).toEqual([]);
    expect(runs).toHaveLength(2);
  });

  it('records nothing for a migration that failed: the next start runs it again', async () => {
    let attempts = 0;
    const flaky: Migration = {
      id: '0.5.0-flaky',
      description: 'fails once',
      up: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('MongoDB went away');
        return 1;
      },
    };
    await expect(runMigrations(db, [flaky], { leases: new LeasesRepo(db), log })).rejects.toThrow('MongoDB went away');
    expect(await appliedMigrations(db)).toEqual(new Set());
    expect(await runMigrations(db, [flaky], { leases: new LeasesRepo(db), log })).toEqual(['0.5.0-flaky']);
  });

  it('a holder that stalled past its lease stops before its next write, while the next holder runs the migration (no clocks compared)', async () => {
    const LEASE_MS = 2000;
    const marks = db.collection<{ _id: string; at: Date }>('marks');
    const holder = spawnGroup(
      process.execPath,
      ['--require', 'tsx/cjs', path.join(__dirname, '../support/migration-holder.ts')],
      {
        env: { ...process.env, MIGRATION_DB: db.databaseName, LEASE_MS: String(LEASE_MS) },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    holder.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => holder.once('exit', resolve));
    try {
      await eventually(
        async () => (await marks.countDocuments({ _id: 'a-0' })) === 1,
        'the first holder to start',
        30_000,
      );
      signalGroup(holder, 'SIGSTOP'); // as Ctrl-Z on `npm run migrate`, or a paused VM
      const stalledWith = await marks.countDocuments({ _id: /^a-/ });

      const next = runMigrations(db, [marking('b')], { leases: new LeasesRepo(db), log, leaseMs: LEASE_MS });
      await eventually(
        async () => (await marks.countDocuments({ _id: 'b-0' })) === 1,
        'the next holder to take the lease over',
        15_000,
      );
      signalGroup(holder, 'SIGCONT');
      expect(await next).toEqual(['0.6.0-slow']);
      expect(await exited).toBe(0);

      expect(await marks.countDocuments({ _id: /^b-/ })).toBe(MARKS);
      expect(await marks.countDocuments({ _id: /^a-/ })).toBe(stalledWith);
      expect(out).toContain('the migrations lease was lost');
    } finally {
      signalGroup(holder, 'SIGCONT');
      signalGroup(holder, 'SIGKILL');
    }
  }, 60_000);

  it("0.5.0-delivery-log-locations: each attempt logged without a location gets its event's, test events none; run again, it changes nothing", async () => {
    const at = new Date();
    const attempt = (id: string, type: string, data: Record<string, unknown>) => ({
      _id: id,
      subscriptionId: 'sub-1',
      webhookId: `msg_${id}`,
      type,
      body: JSON.stringify({ id: `evt_${id}`, type, timestamp: at.toISOString(), data }),
      attempt: 1,
      outcome: 'delivered',
      durationMs: 3,
      at,
      purgeAt: new Date(at.getTime() + 86_400_000),
    });
    // as 14e85b5 wrote them: no locationId
    await db
      .collection('webhookDeliveries')
      .insertMany([
        attempt('d1', 'order.placed', { locationId: 'loc-a', order: { number: 1 } }),
        attempt('d2', 'order.completed', { locationId: 'loc-b', order: { number: 2 } }),
        attempt('d3', 'webhook.test', { subscriptionId: 'sub-1' }),
      ] as never[]);
    const lease = new MigrationLease(Infinity, 60_000);
    expect(await deliveryLogLocations.up(db, log, lease)).toBe(2);
    expect(await deliveryLogLocations.up(db, log, lease)).toBe(0);
    const docs = await db.collection('webhookDeliveries').find({}).sort({ _id: 1 }).toArray();
    expect(docs.map(({ _id, locationId }) => ({ _id, locationId }))).toEqual([
      { _id: 'd1', locationId: 'loc-a' },
      { _id: 'd2', locationId: 'loc-b' },
      { _id: 'd3', locationId: undefined },
    ]);
  });

  it('0.6.0-audit-full-hashes: each chained audit record without a fullHash gets it, and the chain verifies; run again, it changes nothing', async () => {
    const audit = new AuditRepo(db);
    const at = new Date();
    for (let i = 0; i < 3; i++) {
      await audit.append({
        _id: `a${i}`,
        at,
        operatorName: 'root',
        role: 'admin',
        method: 'POST',
        route: '/admin/v1/locations',
        targets: {},
        status: 201,
        requestId: `r${i}`,
        purgeAt: new Date(at.getTime() + 60_000),
      });
    }
    // as the release before 0.5.0 wrote them
    await db.collection('audit').updateMany({ seq: { $lte: 2 } }, { $unset: { fullHash: '' } });
    expect(await audit.verify(undefined)).toMatchObject({ intact: false });
    const lease = new MigrationLease(Infinity, 60_000);
    expect(await auditFullHashes.up(db, log, lease)).toBe(2);
    expect(await auditFullHashes.up(db, log, lease)).toBe(0);
    expect(await audit.verify(undefined)).toMatchObject({ intact: true, checked: 3 });
  });
});
