/**
 * The orders' version-guarded writes (store/orders.ts), on MongoDB (the stand-in, or MONGO_URL):
 * the writes of concurrent jobs go as one `bulkWrite`, and each job still learns whether its own
 * write landed, including when two of them raced for the same order in the same batch.
 */
import type { OrderDoc } from '@pos/shared/store/documents';
import { hasApplied } from '@pos/shared/store/orders';
import type { Repos } from '@pos/shared/store/repos';
import { countedStore, type CountedStore } from '../support/counted-store';

const LOCATION = 'loc-guarded';
const DB = `guarded-writes-${process.pid}`;

describe('guarded order writes', () => {
  let store: CountedStore;
  let repos: Repos;
  let number = 0;

  beforeAll(async () => {
    store = await countedStore(DB);
    repos = store.repos;
  });
  afterAll(async () => {
    await store.close(['orders', 'appliedJobs']);
  });

  const newOrder = () =>
    repos.orders.insert({ locationId: LOCATION, number: ++number, state: 'PLACED', rows: [] }, new Date());
  const reportFailure = (order: OrderDoc, jobId: string) =>
    repos.orders.applyChange(order, { state: 'PLACED', failureCount: order.failureCount + 1 }, jobId, new Date());
  const stored = (order: OrderDoc) => repos.orders.find({ locationId: LOCATION }, order.number);

  it("writes concurrent jobs' changes to different orders in one command, each landed", async () => {
    const orders = await Promise.all(Array.from({ length: 16 }, newOrder));
    store.resetCount();
    const after = await Promise.all(orders.map((order, i) => reportFailure(order, `job-${i}`)));
    expect(store.commands()).toBe(1);
    expect(after.map((doc) => doc?.version)).toEqual(orders.map(() => 1));
    for (const [i, order] of orders.entries()) {
      const now = (await stored(order))!;
      expect(now).toMatchObject({ version: 1, failureCount: 1 });
      expect(hasApplied(now, `job-${i}`)).toBe(true);
      expect(hasApplied(now, `job-${i + 1}`)).toBe(false);
    }
  });

  it('tells, of two jobs that wrote the same order at the same version in one batch, the one that landed from the one that lost', async () => {
    const order = await newOrder();
    const [first, second] = await Promise.all([reportFailure(order, 'job-first'), reportFailure(order, 'job-second')]);
    const landed = [first, second].filter((doc) => doc !== null);
    expect(landed).toHaveLength(1);
    const now = (await stored(order))!;
    expect(now.version).toBe(1);
    expect(now.appliedJobs).toHaveLength(1);
    expect([hasApplied(now, 'job-first'), hasApplied(now, 'job-second')]).toEqual([first !== null, second !== null]);
    // The loser re-reads and decides again: its write at the new version lands.
    const again = await reportFailure(now, first ? 'job-second' : 'job-first');
    expect(again).toMatchObject({ version: 2, failureCount: 2 });
  });

  it('tells two runs of one job (BullMQ may run a job again while its first run still works) which of them wrote', async () => {
    const order = await newOrder();
    const runs = await Promise.all([reportFailure(order, 'job-twice'), reportFailure(order, 'job-twice')]);
    expect(runs.filter((doc) => doc !== null)).toHaveLength(1);
    const now = (await stored(order))!;
    expect(now).toMatchObject({ version: 1, failureCount: 1 });
    expect(hasApplied(now, 'job-twice')).toBe(true);
  });

  it('remembers every job that wrote a busy order, however many wrote since: the oldest in the ledger, moved 64 at a time', async () => {
    let order = await newOrder();
    store.resetCount();
    for (let i = 0; i < 300; i++) order = (await reportFailure(order, `idem-busy-${i}`))!;
    // 300 writes, and a ledger insert at the 129th, 194th and 259th
    expect(store.commands()).toBe(303);
    const now = (await stored(order))!;
    expect(now).toMatchObject({ version: 300, failureCount: 300, appliedJobsMoved: true });
    expect(now.appliedJobs.length).toBeLessThanOrEqual(128);
    expect(hasApplied(now, 'idem-busy-0')).toBe(false);
    for (const i of [0, 1, 63, 64, 127, 128, 200, 235, 236, 299])
      expect(await repos.orders.appliedEver(now, `idem-busy-${i}`)).toBe(true);
    expect(await repos.orders.appliedEver(now, 'idem-busy-300')).toBe(false);
    // another order's ledger is not this one's
    expect(await repos.orders.appliedEver({ ...now, _id: `${LOCATION}:0` }, 'idem-busy-0')).toBe(false);
  });

  it('reads no ledger for an order that never moved entries to it', async () => {
    const order = (await reportFailure(await newOrder(), 'job-quiet'))!;
    store.resetCount();
    expect(await repos.orders.appliedEver(order, 'job-other')).toBe(false);
    expect(await repos.orders.appliedEver(order, 'job-quiet')).toBe(true);
    expect(store.commands()).toBe(0);
  });

  it("recognises an order's applied job ids written before the attempt marks", () => {
    expect(hasApplied({ appliedJobs: ['idem-abc'] }, 'idem-abc')).toBe(true);
    expect(hasApplied({ appliedJobs: ['idem-abcd'] }, 'idem-abc')).toBe(false);
    expect(hasApplied({ appliedJobs: ['idem-abcd~x1'] }, 'idem-abc')).toBe(false);
  });
});
