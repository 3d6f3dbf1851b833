/**
 * One run of the order lifecycle job against MongoDB (the run itself, without the queue):
 * batches, the time budget, copy-then-delete, a crash between the two, a cart edited while it
 * was being moved, expiry and purges.
 */
import { randomBytes } from 'node:crypto';
import { Db, MongoClient } from 'mongodb';
import { createLogger } from '@pos/shared/log';
import type { OrderDoc } from '@pos/shared/domain/records';
import { OrderArchiveRepo, ArchivedOrderDoc } from '@pos/shared/store/archive';
import { AuditRepo } from '@pos/shared/store/audit';
import { CommandsRepo } from '@pos/shared/store/commands';
import { newId } from '@pos/shared/store/ids';
import { ensureIndexes } from '@pos/shared/store/mongo';
import type { NewOrder, OrdersRepo } from '@pos/shared/store/orders';
import { createRepos } from '@pos/shared/store/repos';
import { LifecycleDeps, LifecycleSettings, runLifecycle } from '@pos/worker/schedules/lifecycle-run';
import { sampleRows } from '../support/http';

const MINUTE = 60_000;
const settings: LifecycleSettings = {
  archiveAfterMs: 15 * MINUTE,
  retentionMs: 90 * 24 * 60 * MINUTE,
  selectingTtlMs: 120 * MINUTE,
};
const log = createLogger('silent', 'test');
const rows = sampleRows.map((row, i) => ({ rowNumber: i + 1, ...row }));

describe('a lifecycle run', () => {
  let client: MongoClient;
  let db: Db;
  let deps: LifecycleDeps & { orders: OrdersRepo; archive: OrderArchiveRepo; commands: CommandsRepo };
  let location: string;
  let next = 0;

  beforeAll(async () => {
    client = await new MongoClient(process.env.TEST_MONGO_URL!).connect();
  });
  afterAll(() => client.close());
  beforeEach(async () => {
    db = client.db(`t${randomBytes(5).toString('hex')}`);
    await ensureIndexes(db);
    deps = { orders: createRepos(db).orders, archive: new OrderArchiveRepo(db), commands: new CommandsRepo(db), log };
    location = `loc-${randomBytes(3).toString('hex')}`;
  });
  // Each test has a database of its own (the stand-in has no dropDatabase).

  const hot = () => db.collection<OrderDoc>('orders');
  const cold = () => db.collection<ArchivedOrderDoc>('orderArchive');
  const ids = async (c: ReturnType<typeof hot> | ReturnType<typeof cold>) =>
    (await c.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id).sort();

  /** An order as the service would have left it, last written `agoMs` before now. */
  async function order(state: OrderDoc['state'], agoMs: number, extra: Partial<OrderDoc> = {}): Promise<OrderDoc> {
    const at = new Date(Date.now() - agoMs);
    const fields: NewOrder = {
      locationId: location,
      number: ++next,
      state: state === 'SELECTING' ? 'SELECTING' : 'PLACED',
      rows,
    };
    const doc = await deps.orders.insert(fields, at);
    const finished =
      state === 'COMPLETED' || state === 'ABORTED'
        ? { completeTime: at, version: 1, appliedJobs: [`job-${next}`] }
        : {};
    const stored = { ...doc, state, ...finished, updatedAt: at, ...extra };
    await hot().replaceOne({ _id: doc._id }, stored);
    return stored;
  }

  it('moves finished orders past ORDER_ARCHIVE_AFTER in batches, copies intact, and leaves everything else', async () => {
    const finished = [];
    for (let i = 0; i < 7; i++) finished.push(await order(i % 2 ? 'ABORTED' : 'COMPLETED', 20 * MINUTE));
    const recent = await order('COMPLETED', MINUTE);
    const others = [
      await order('PLACED', 180 * MINUTE),
      await order('FAILED', 180 * MINUTE),
      await order('NEW', 60 * MINUTE),
    ];

    const run = await runLifecycle(deps, settings, { batchSize: 3, budgetMs: 60_000 });

    expect(run).toMatchObject({ archived: 7, expired: 0, purged: 0, commandsPurged: 0, complete: true });
    expect(await ids(hot())).toEqual([recent, ...others].map((o) => o._id).sort());
    expect(await ids(cold())).toEqual(finished.map((o) => o._id).sort());
    for (const original of finished) {
      const copy = await cold().findOne({ _id: original._id });
      const { archivedAt, purgeAt, ...rest } = copy!;
      expect(rest).toEqual(original);
      expect(purgeAt.getTime() - archivedAt.getTime()).toBe(settings.retentionMs);
    }
  });

  it('stops starting batches at its time budget and the next run goes on', async () => {
    for (let i = 0; i < 7; i++) await order('COMPLETED', 20 * MINUTE);
    const first = await runLifecycle(deps, settings, { batchSize: 3, budgetMs: 0 });
    expect(first).toMatchObject({ archived: 3, complete: false });
    const second = await runLifecycle(deps, settings, { batchSize: 3, budgetMs: 60_000 });
    expect(second).toMatchObject({ archived: 4, complete: true });
    expect(await hot().countDocuments()).toBe(0);
    expect(await cold().countDocuments()).toBe(7);
  });

  it('a run that dies between the copy and the delete is finished by the next: nothing lost, nothing in both', async () => {
    const finished = [];
    for (let i = 0; i < 5; i++) finished.push(await order('COMPLETED', 20 * MINUTE));
    const crash = new Error('worker died');
    await expect(
      runLifecycle(
        {
          ...deps,
          checkpoint: () => {
            throw crash;
          },
        },
        settings,
        { batchSize: 3, budgetMs: 60_000 },
      ),
    ).rejects.toBe(crash);
    // The first batch is in both collections, the rest only hot.
    expect(await cold().countDocuments()).toBe(3);
    expect(await hot().countDocuments()).toBe(5);

    const rerun = await runLifecycle(deps, settings, { batchSize: 3, budgetMs: 60_000 });
    expect(rerun).toMatchObject({ archived: 5, complete: true });
    expect(await ids(hot())).toEqual([]);
    expect(await ids(cold())).toEqual(finished.map((o) => o._id).sort());
  });

  it('expires unsubmitted orders past SELECTING_TTL (marked, kept apart from history); a cart edited mid-move stays hot and its copy is dropped', async () => {
    const abandoned = await order('SELECTING', 3 * 60 * MINUTE);
    const unsubmitted = await order('NEW', 3 * 60 * MINUTE);
    const edited = await order('SELECTING', 3 * 60 * MINUTE);
    const live = await order('SELECTING', 10 * MINUTE);
    const waiting = await order('NEW', 10 * MINUTE);

    let editedOnce = false;
    const run = await runLifecycle(
      {
        ...deps,
        // The customer replaces the rows after the copy was written and before the hot delete.
        checkpoint: async () => {
          if (editedOnce) return;
          editedOnce = true;
          expect(await deps.orders.replaceRows(edited, rows.slice(0, 1), new Date())).not.toBeNull();
        },
      },
      settings,
      { batchSize: 10, budgetMs: 60_000 },
    );

    expect(run).toMatchObject({ expired: 2, archived: 0 });
    expect(await ids(hot())).toEqual([edited._id, live._id, waiting._id].sort());
    expect(await ids(cold())).toEqual([abandoned._id, unsubmitted._id].sort());
    expect(await cold().findOne({ _id: abandoned._id })).toMatchObject({
      state: 'SELECTING',
      expiredAt: expect.any(Date),
    });
    expect(await cold().findOne({ _id: unsubmitted._id })).toMatchObject({ state: 'NEW', expiredAt: expect.any(Date) });
    expect(await hot().findOne({ _id: edited._id })).toMatchObject({
      version: edited.version + 1,
      rows: rows.slice(0, 1),
    });
    // To the customer (and to late requests) an expired cart is a missing order.
    expect(await deps.archive.find({ locationId: location }, abandoned.number)).toBeNull();
    expect(await deps.archive.find({ locationId: location }, unsubmitted.number)).toBeNull();
  });

  it('purges archived orders past their retention, and commands a day after they expired', async () => {
    for (let i = 0; i < 4; i++) await order('COMPLETED', 20 * MINUTE);
    expect(await runLifecycle(deps, settings, { batchSize: 3, budgetMs: 60_000 })).toMatchObject({
      archived: 4,
      purged: 0,
    });
    expect(await cold().countDocuments()).toBe(4);

    const now = new Date();
    const DAY = 24 * 60 * MINUTE;
    // expired 10 minutes ago (kept a day more, for its events), and a day and 10 minutes ago
    await deps.commands.insert(
      { locationId: location, number: 1, kind: 'REQUEST_BILL' },
      new Date(now.getTime() - 20 * MINUTE),
      10 * MINUTE,
    );
    await deps.commands.insert(
      { locationId: location, number: 2, kind: 'REQUEST_BILL' },
      new Date(now.getTime() - DAY - 20 * MINUTE),
      10 * MINUTE,
    );
    await deps.commands.insert({ locationId: location, number: 3, kind: 'REQUEST_BILL' }, now, 10 * MINUTE);
    expect(await runLifecycle(deps, settings, { batchSize: 3, budgetMs: 60_000 }, now)).toMatchObject({
      purged: 0,
      commandsPurged: 1,
    });
    expect((await db.collection('commands').find().toArray()).map((c) => c.number).sort()).toEqual([1, 3]);

    const afterRetention = new Date(now.getTime() + settings.retentionMs + MINUTE);
    const run = await runLifecycle(deps, settings, { batchSize: 3, budgetMs: 60_000 }, afterRetention);
    expect(run).toMatchObject({ purged: 4, commandsPurged: 2, complete: true });
    expect(await cold().countDocuments()).toBe(0);
    expect(await db.collection('commands').countDocuments()).toBe(0);
  });

  it('purges audit records past AUDIT_RETENTION oldest first, batch by batch, and the chain still verifies from its anchor', async () => {
    const audit = new AuditRepo(db);
    const now = new Date();
    const record = (purgeInMs: number) =>
      audit.append({
        _id: newId(),
        at: new Date(now.getTime() - 2 * MINUTE),
        operatorName: 'root',
        role: 'admin',
        method: 'POST',
        route: '/admin/v1/locations',
        targets: {},
        status: 201,
        requestId: randomBytes(4).toString('hex'),
        purgeAt: new Date(now.getTime() + purgeInMs),
      });
    for (let i = 0; i < 5; i++) await record(-MINUTE);
    await record(MINUTE);
    // a record due sooner behind one not yet due (AUDIT_RETENTION
    // shortened since): kept, so that the chain has no gap
    await record(-MINUTE);
    const run = await runLifecycle({ ...deps, audit }, settings, { batchSize: 2, budgetMs: 60_000 }, now);
    expect(run).toMatchObject({ auditPurged: 5, complete: true });
    expect((await db.collection('audit').find().sort({ seq: 1 }).toArray()).map((doc) => doc.seq)).toEqual([6, 7]);
    expect(await audit.verify(undefined)).toEqual({
      intact: true,
      checked: 2,
      firstSeq: 6,
      lastSeq: 7,
      complete: true,
    });
    expect(await db.collection('auditAnchors').findOne({ _id: 'audit' as never })).toMatchObject({ seq: 5 });

    // once the one in front is due, both go
    const later = new Date(now.getTime() + 2 * MINUTE);
    expect(await runLifecycle({ ...deps, audit }, settings, { batchSize: 2, budgetMs: 60_000 }, later)).toMatchObject({
      auditPurged: 2,
    });
    expect(await audit.verify(undefined)).toEqual({ intact: true, checked: 0, complete: true });
    expect((await record(MINUTE)).seq).toBe(8);
    expect(await audit.verify(undefined)).toMatchObject({ intact: true, checked: 1, firstSeq: 8, lastSeq: 8 });
  });

  it("pages a location's history by completion time with a cursor", async () => {
    const base = Date.now() - 60 * MINUTE;
    const made = [];
    // Two orders share a completion time: the number breaks the tie.
    for (const offset of [5, 1, 3, 3, 4]) {
      made.push(await order('COMPLETED', 20 * MINUTE, { completeTime: new Date(base + offset * 1000) }));
    }
    await order('COMPLETED', 20 * MINUTE, { locationId: 'elsewhere', completeTime: new Date(base + 2000) });
    await runLifecycle(deps, settings, { batchSize: 10, budgetMs: 60_000 });

    const expected = [...made]
      .sort((a, b) => a.completeTime!.getTime() - b.completeTime!.getTime() || a.number - b.number)
      .map((o) => o.number);
    const seen: number[] = [];
    let page = await deps.archive.history({ locationId: location, limit: 2 });
    for (;;) {
      seen.push(...page.orders.map((o) => o.number));
      if (!page.next) break;
      page = await deps.archive.history({ locationId: location, limit: 2, after: page.next });
    }
    expect(seen).toEqual(expected);

    const ranged = await deps.archive.history({
      locationId: location,
      limit: 10,
      from: new Date(base + 3000),
      to: new Date(base + 5000),
    });
    expect(ranged.orders.map((o) => o.number)).toEqual(expected.slice(1, 4));
    expect(ranged.next).toBeUndefined();
  });
});
