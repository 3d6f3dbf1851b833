/**
 * The outbox of a document (store/outboxes.ts), on MongoDB (the stand-in, or MONGO_URL): a write
 * adds its events; the relay's clear removes exactly what it read, so a document written again
 * between the read and the clear keeps its new events and nothing else, however often that
 * happens; events come back in the order of the document's writes. Events a 0.5.0 worker's write
 * took over for its own relay are the relay's at once.
 */
import { MongoClient } from 'mongodb';
import { orderOutbox } from '@pos/shared/events/outbox';
import type { OrderDoc, OutboxEntry, WithOutbox } from '@pos/shared/store/documents';
import { ensureIndexes } from '@pos/shared/store/mongo';
import { Outbox, Outboxes, withOutbox } from '@pos/shared/store/outboxes';
import { createRepos, type Repos } from '@pos/shared/store/repos';

const LOCATION = 'loc-outbox';

describe('an outbox', () => {
  let mongo: MongoClient;
  let repos: Repos;
  let outbox: Outbox;
  let number = 0;

  beforeAll(async () => {
    mongo = await MongoClient.connect(process.env.TEST_MONGO_URL!);
    const db = mongo.db(`outboxes-${process.pid}`);
    await ensureIndexes(db);
    repos = createRepos(db);
    outbox = new Outbox('orders', db.collection('orders'));
  });
  afterAll(async () => {
    await mongo.db(`outboxes-${process.pid}`).collection('orders').deleteMany({});
    await mongo.close();
  });

  const newOrder = () =>
    repos.orders.insert({ locationId: LOCATION, number: ++number, state: 'PLACED', rows: [] }, new Date(), (after) =>
      orderOutbox(after, new Date()),
    );
  const orders = () => mongo.db(`outboxes-${process.pid}`).collection<OrderDoc>('orders');
  /** A failure report on the order as it is stored, its events left to the relay (as most writes do). */
  async function reportFailure(order: OrderDoc): Promise<OrderDoc> {
    const after = { ...order, failureCount: order.failureCount + 1, version: order.version + 1 };
    const update = withOutbox(
      { $set: { failureCount: after.failureCount }, $inc: { version: 1 } },
      orderOutbox(after, new Date()),
    );
    expect((await orders().updateOne({ _id: order._id, version: order.version }, update)).modifiedCount).toBe(1);
    return after;
  }
  /**
   * What a 0.5.0 worker that relays leaves of its write, should its relay stop
   * before its pass: the events taken over, due in minutes.
   */
  const takenBy050 = (id: string) =>
    orders().updateOne({ _id: id }, { $set: { outboxCount: 0, outboxDue: new Date(Date.now() + 5 * 60_000) } });
  const stored = async (id: string) => (await orders().findOne({ _id: id }))!;
  /** What the relay reads of the document. */
  const heldOf = async (id: string) => (await new Outboxes([outbox]).held(1000))[0]!.docs.find((doc) => doc._id === id);
  /**
   * The versions whose writes the events come from, in the order listed (a failure report
   * on a PLACED order is two events: placed again, and failed).
   */
  const versionsOf = (held: { outbox: { rank: [number, number] }[] }) => [
    ...new Set(held.outbox.map((event) => event.rank[0])),
  ];

  it('keeps, on a document written between the read and the clear, its new events only: never more than one pass behind', async () => {
    let order = await newOrder();
    for (let pass = 0; pass < 20; pass++) {
      order = await reportFailure(order);
      const read = (await heldOf(order._id))!;
      order = await reportFailure(order); // written while the relay records what it read
      await outbox.cleared([read]);
      const left = (await heldOf(order._id))!;
      expect(versionsOf(left)).toEqual([order.version]);
      expect(left.count).toBe(left.outbox.length);
    }
    await outbox.cleared([(await heldOf(order._id))!]);
    expect(await heldOf(order._id)).toBeUndefined();
  });

  it("lists a document's events in the order of its writes, and a second clear of the same read changes nothing", async () => {
    let order = await newOrder();
    for (let i = 0; i < 4; i++) order = await reportFailure(order);
    const read = (await heldOf(order._id))!;
    expect(versionsOf(read)).toEqual([0, 1, 2, 3, 4]);
    expect(read.outbox.map((event) => event.rank)).toEqual(
      [...read.outbox.map((event) => event.rank)].sort((a, b) => a[0] - b[0] || a[1] - b[1]),
    );
    expect(new Set(read.outbox.map((event) => event.id)).size).toBe(read.count);
    await outbox.cleared([read]);
    order = await reportFailure(order);
    await outbox.cleared([read]); // a relay that overlapped this one, clearing what it read too
    expect(versionsOf((await heldOf(order._id))!)).toEqual([5]);
  });

  it('sets back to 0 a count read without events, unless a write came since', async () => {
    const order = await newOrder();
    await orders().updateOne({ _id: order._id }, { $unset: { outbox: '' } }); // events gone, count left
    const stale = (await heldOf(order._id))!;
    expect([stale.outbox, stale.count]).toEqual([[], 1]);
    await outbox.cleared([stale]);
    expect(await heldOf(order._id)).toBeUndefined();
  });

  it('hands the relay at once the events a 0.5.0 writer took over, and clears them unless one took them over again since', async () => {
    let order = await reportFailure(await newOrder());
    await takenBy050(order._id);
    const read = (await heldOf(order._id))!;
    expect([read.count, read.due]).toEqual([0, expect.any(Date)]);
    expect(versionsOf(read)).toEqual([0, 1]);

    await takenBy050(order._id); // its writer again, between the read and the clear
    await outbox.cleared([read]);
    expect(versionsOf({ outbox: Object.values((await stored(order._id)).outbox!) })).toEqual([0, 1]);

    order = await reportFailure(await stored(order._id)); // and a write of this release's, leaving its own
    const all = (await heldOf(order._id))!;
    expect([all.count, versionsOf(all)]).toEqual([2, [0, 1, 2]]);
    await outbox.cleared([all]);
    const cleared = await stored(order._id);
    expect([Object.keys(cleared.outbox!), cleared.outboxDue, cleared.outboxCount]).toEqual([[], undefined, 0]);
    expect(await heldOf(order._id)).toBeUndefined();
  });

  it('reads every outbox in one command: each document under its own outbox, up to the limit of each', async () => {
    const db = mongo.db(`outboxes-all-${process.pid}`);
    const entry = (id: string): Record<string, OutboxEntry> => ({
      [id]: { id, type: 'order.placed', locationId: LOCATION, at: new Date(), rank: [1, 0], data: {} },
    });
    await db.collection<{ _id: string } & WithOutbox>('first').insertMany([
      { _id: 'a1', outbox: entry('e-a1'), outboxCount: 1 },
      { _id: 'a2', outbox: entry('e-a2'), outboxCount: 1 },
      { _id: 'a3', outboxCount: 0 }, // holds nothing
    ]);
    await db.collection<{ _id: string } & WithOutbox>('second').insertMany([
      { _id: 'b1', outbox: entry('e-b1'), outboxCount: 0, outboxDue: new Date(Date.now() - 1000) }, // taken over by 0.5.0, due
      { _id: 'b2', outbox: entry('e-b2'), outboxCount: 0, outboxDue: new Date(Date.now() + 60_000) }, // taken over by 0.5.0, not due: read all the same
      { _id: 'b3', outboxCount: 0 }, // holds nothing
    ]);
    const all = new Outboxes([
      new Outbox('first', db.collection('first')),
      new Outbox('empty', db.collection('empty')),
      new Outbox('second', db.collection('second')),
    ]);
    const ids = (held: Awaited<ReturnType<Outboxes['held']>>) =>
      held.map(({ outbox, docs }) => [outbox.name, docs.map((doc) => doc._id).sort()]);
    expect(ids(await all.held(10))).toEqual([
      ['first', ['a1', 'a2']],
      ['empty', []],
      ['second', ['b1', 'b2']],
    ]);
    const limited = await all.held(1);
    expect(limited.map(({ docs }) => docs.length)).toEqual([1, 0, 1]);
    expect((await all.held(10))[2]!.docs.find((doc) => doc._id === 'b1')).toMatchObject({
      _id: 'b1',
      count: 0,
      outbox: [{ id: 'e-b1' }],
    });
    await db
      .dropDatabase()
      .catch(() => Promise.all(['first', 'second'].map((name) => db.collection(name).deleteMany({}))));
  });
});
