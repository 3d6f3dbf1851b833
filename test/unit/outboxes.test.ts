/**
 * The outbox of a document (store/outboxes.ts), on MongoDB (the stand-in, or MONGO_URL): a write
 * adds its events; the relay's clear removes exactly what it read, so a document written again
 * between the read and the clear keeps its new events and nothing else, however often that
 * happens; events come back in the order of the document's writes.
 */
import { MongoClient } from 'mongodb';
import { orderOutbox } from '@pos/shared/events/outbox';
import type { OrderDoc } from '@pos/shared/store/documents';
import { ensureIndexes } from '@pos/shared/store/mongo';
import { Outbox } from '@pos/shared/store/outboxes';
import { createRepos, type Repos } from '@pos/shared/store/repos';

const LOCATION = 'loc-outbox';

describe('an outbox', () => {
  let mongo: MongoClient;
  let repos: Repos;
  let outbox: Outbox<OrderDoc>;
  let number = 0;

  beforeAll(async () => {
    mongo = await MongoClient.connect(process.env.TEST_MONGO_URL!);
    const db = mongo.db(`outboxes-${process.pid}`);
    await ensureIndexes(db);
    repos = createRepos(db);
    outbox = new Outbox('orders', db.collection<OrderDoc>('orders'));
  });
  afterAll(async () => {
    await mongo.db(`outboxes-${process.pid}`).collection('orders').deleteMany({});
    await mongo.close();
  });

  const newOrder = () => repos.orders.insert({ locationId: LOCATION, number: ++number, state: 'PLACED', rows: [] }, new Date(), (after) => orderOutbox(after, new Date()));
  /** A failure report on the order as it is stored: one more event in its outbox. */
  async function reportFailure(order: OrderDoc): Promise<OrderDoc> {
    const after = await repos.orders.applyChange(order, { state: 'PLACED', failureCount: order.failureCount + 1 }, `job-${order.version}`, new Date(), (doc) => orderOutbox(doc, new Date()));
    return after!;
  }
  const heldOf = async (id: string) => (await outbox.held(1000)).find((doc) => doc._id === id);
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
    const orders = mongo.db(`outboxes-${process.pid}`).collection<OrderDoc>('orders');
    await orders.updateOne({ _id: order._id }, { $unset: { outbox: '' } }); // events gone, count left
    const stale = (await heldOf(order._id))!;
    expect([stale.outbox, stale.count]).toEqual([[], 1]);
    await outbox.cleared([stale]);
    expect(await heldOf(order._id)).toBeUndefined();
  });
});
