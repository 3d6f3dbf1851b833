/**
 * The migration runner (shared/src/migrations/runner.ts) on MongoDB (the stand-in, or MONGO_URL):
 * each migration once per deployment, whichever of the processes starting together takes the
 * lease; and each migration of the list on documents as the release before wrote them.
 */
import { MongoClient, type Db } from 'mongodb';
import { createLogger } from '@pos/shared/log';
import { deliveryLogLocations } from '@pos/shared/migrations/delivery-log-locations';
import { appliedMigrations, type Migration, runMigrations } from '@pos/shared/migrations/runner';
import { LeasesRepo } from '@pos/shared/store/leases';
import { ensureIndexes } from '@pos/shared/store/mongo';

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
      },
    };
    await expect(runMigrations(db, [flaky], { leases: new LeasesRepo(db), log })).rejects.toThrow('MongoDB went away');
    expect(await appliedMigrations(db)).toEqual(new Set());
    expect(await runMigrations(db, [flaky], { leases: new LeasesRepo(db), log })).toEqual(['0.5.0-flaky']);
  });

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
    await db.collection('webhookDeliveries').insertMany([
      attempt('d1', 'order.placed', { locationId: 'loc-a', order: { number: 1 } }),
      attempt('d2', 'order.completed', { locationId: 'loc-b', order: { number: 2 } }),
      attempt('d3', 'webhook.test', { subscriptionId: 'sub-1' }),
    ] as never[]);
    await deliveryLogLocations.up(db, log);
    await deliveryLogLocations.up(db, log);
    const docs = await db.collection('webhookDeliveries').find({}).sort({ _id: 1 }).toArray();
    expect(docs.map(({ _id, locationId }) => ({ _id, locationId }))).toEqual([
      { _id: 'd1', locationId: 'loc-a' },
      { _id: 'd2', locationId: 'loc-b' },
      { _id: 'd3', locationId: undefined },
    ]);
  });
});
