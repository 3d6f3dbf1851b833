/**
 * The outbox of a document (store/outboxes.ts), on MongoDB (the stand-in, or MONGO_URL): a write
 * adds its events; the relay's clear removes exactly what it read, so a document written again
 * between the read and the clear keeps its new events and nothing else, however often that
 * happens; events come back in the order of the document's writes. A transition's write takes
 * its order's events over from the relay until they are due, and removes those recorded.
 */
import { MongoClient } from 'mongodb';
import { orderOutbox } from '@pos/shared/events/outbox';
import type { OrderDoc, OutboxEntry, WithOutbox } from '@pos/shared/store/documents';
import { ensureIndexes } from '@pos/shared/store/mongo';
import { Outbox, Outboxes, TAKEN_OUTBOX_DUE_MS, withOutbox } from '@pos/shared/store/outboxes';
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

  const newOrder = () => repos.orders.insert({ locationId: LOCATION, number: ++number, state: 'PLACED', rows: [] }, new Date(), (after) => orderOutbox(after, new Date()));
  const orders = () => mongo.db(`outboxes-${process.pid}`).collection<OrderDoc>('orders');
  /** A failure report on the order as it is stored, its events left to the relay (as most writes do). */
  async function reportFailure(order: OrderDoc): Promise<OrderDoc> {
    const after = { ...order, failureCount: order.failureCount + 1, version: order.version + 1 };
    const update = withOutbox({ $set: { failureCount: after.failureCount }, $inc: { version: 1 } }, orderOutbox(after, new Date()));
    expect((await orders().updateOne({ _id: order._id, version: order.version }, update)).modifiedCount).toBe(1);
    return after;
  }
  /** A failure report as the relaying worker writes it: the events taken over; `recorded` removed. */
  async function reportTakenFailure(order: OrderDoc, recorded: string[] = []): Promise<OrderDoc> {
    const after = await repos.orders.applyChange(order, { state: 'PLACED', failureCount: order.failureCount + 1 }, `job-${order.version}`, new Date(), (doc) => orderOutbox(doc, new Date()), { recorded });
    return after!;
  }
  const stored = async (id: string) => (await orders().findOne({ _id: id }))!;
  /** What the relay reads of the document; taken-over events once due by `dueBy`. */
  const heldOf = async (id: string, dueBy = new Date()) => (await new Outboxes([outbox]).held(1000, dueBy))[0]!.docs.find((doc) => doc._id === id);
  /** The versions whose writes the events come from, in the order listed (a failure report on a PLACED order is two events: placed again, and failed). */
  const versionsOf = (held: { outbox: { rank: [number, number] }[] }) => [...new Set(held.outbox.map((event) => event.rank[0]))];

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
    expect(read.outbox.map((event) => event.rank)).toEqual([...read.outbox.map((event) => event.rank)].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
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

  it("takes a transition's events over from the relay until they are due, and removes with the next write those recorded", async () => {
    const before = Date.now();
    let order = await reportFailure(await newOrder()); // events left to the relay: created, then a report
    order = await reportTakenFailure(await stored(order._id));
    const held = await stored(order._id);
    expect(held.outboxCount).toBe(0);
    expect(held.outboxDue!.getTime()).toBeGreaterThanOrEqual(before + TAKEN_OUTBOX_DUE_MS);
    expect(Object.keys(held.outbox!).sort()).toEqual(Object.keys(order.outbox!).sort()); // what the write returns is what it left
    expect(versionsOf({ outbox: Object.values(held.outbox!) })).toEqual([0, 1, 2]);
    expect(await heldOf(order._id)).toBeUndefined(); // not the relay's until due
    expect(versionsOf((await heldOf(order._id, new Date(Date.now() + TAKEN_OUTBOX_DUE_MS)))!)).toEqual([0, 1, 2]); // (what a relay taking the lease reads)

    const recorded = Object.keys(order.outbox!);
    order = await reportTakenFailure(order, recorded);
    expect(versionsOf({ outbox: Object.values((await stored(order._id)).outbox!) })).toEqual([3]);
    order = await reportTakenFailure(order); // nothing known recorded: nothing removed
    expect(versionsOf({ outbox: Object.values((await stored(order._id)).outbox!) })).toEqual([3, 4]);
    order = await reportTakenFailure(order, Object.keys(order.outbox!));
    const last = await stored(order._id);
    expect(versionsOf({ outbox: Object.values(last.outbox!) })).toEqual([5]);
    expect(last.outboxDue).toBeDefined();
  });

  it("hands the relay events their writer did not record by their due time, unless a writer took them over since", async () => {
    let order = await reportTakenFailure(await newOrder());
    await orders().updateOne({ _id: order._id }, { $set: { outboxDue: new Date(Date.now() - 1000) } }); // as if long ago
    const read = (await heldOf(order._id))!;
    expect(read.due).toBeDefined();
    expect(versionsOf(read)).toEqual([0, 1]);

    order = await reportTakenFailure(await stored(order._id)); // its writer again, between the read and the clear
    await outbox.cleared([read]);
    expect(versionsOf({ outbox: Object.values((await stored(order._id)).outbox!) })).toEqual([0, 1, 2]); // left to that writer

    await orders().updateOne({ _id: order._id }, { $set: { outboxDue: new Date(Date.now() - 1000) } });
    await outbox.cleared([(await heldOf(order._id))!]);
    const cleared = await stored(order._id);
    expect([Object.keys(cleared.outbox!), cleared.outboxDue, cleared.outboxCount]).toEqual([[], undefined, 0]);
    expect(await heldOf(order._id)).toBeUndefined();
  });

  it('hands the relay all the events of an order a write left it events on, those taken over with them', async () => {
    let order = await reportTakenFailure(await newOrder());
    order = await reportFailure(await stored(order._id)); // a write that leaves its events to the relay (as a deadline's does)
    const read = (await heldOf(order._id))!;
    expect(read.count).toBe(2);
    expect(versionsOf(read)).toEqual([0, 1, 2]); // the relay records them all, then removes them all
    await outbox.cleared([read]);
    const cleared = await stored(order._id);
    expect([Object.keys(cleared.outbox!), cleared.outboxDue, cleared.outboxCount]).toEqual([[], undefined, 0]);
  });

  it('reads every outbox in one command: each document under its own outbox, up to the limit of each', async () => {
    const db = mongo.db(`outboxes-all-${process.pid}`);
    const entry = (id: string): Record<string, OutboxEntry> => ({ [id]: { id, type: 'order.placed', locationId: LOCATION, at: new Date(), rank: [1, 0], data: {} } });
    await db.collection<{ _id: string } & WithOutbox>('first').insertMany([
      { _id: 'a1', outbox: entry('e-a1'), outboxCount: 1 },
      { _id: 'a2', outbox: entry('e-a2'), outboxCount: 1 },
      { _id: 'a3', outboxCount: 0 }, // holds nothing
    ]);
    await db.collection<{ _id: string } & WithOutbox>('second').insertMany([
      { _id: 'b1', outbox: entry('e-b1'), outboxCount: 0, outboxDue: new Date(Date.now() - 1000) }, // taken over, due
      { _id: 'b2', outbox: entry('e-b2'), outboxCount: 0, outboxDue: new Date(Date.now() + 60_000) }, // taken over, not due
    ]);
    const all = new Outboxes([new Outbox('first', db.collection('first')), new Outbox('empty', db.collection('empty')), new Outbox('second', db.collection('second'))]);
    const ids = (held: Awaited<ReturnType<Outboxes['held']>>) => held.map(({ outbox, docs }) => [outbox.name, docs.map((doc) => doc._id).sort()]);
    expect(ids(await all.held(10, new Date()))).toEqual([['first', ['a1', 'a2']], ['empty', []], ['second', ['b1']]]);
    const limited = await all.held(1, new Date(Date.now() + 120_000));
    expect(limited.map(({ docs }) => docs.length)).toEqual([1, 0, 1]);
    expect((await all.held(10, new Date()))[2]!.docs[0]).toMatchObject({ _id: 'b1', count: 0, outbox: [{ id: 'e-b1' }] });
    await db.dropDatabase().catch(() => Promise.all(['first', 'second'].map((name) => db.collection(name).deleteMany({}))));
  });
});
