/**
 * Recording in the event log (store/event-log.ts), on MongoDB (the stand-in, or MONGO_URL): each
 * event once, each at the next place, in the order given, whichever of several writers records;
 * a writer alone records a batch in one insert, without reading the top; deliveries settled
 * together in one update, each counted down once.
 */
import { EventLogRepo, type EventToRecord } from '@pos/shared/store/event-log';
import { countedStore, type CountedStore } from '../support/counted-store';

const DB = `event-log-${process.pid}`;

describe('the event log', () => {
  /** Two processes' stores on one database: each its own repository, as each process has. */
  let one: CountedStore;
  let other: CountedStore;
  let n = 0;

  beforeAll(async () => {
    one = await countedStore(DB);
    other = await countedStore(DB);
  });
  afterAll(async () => {
    await other.close([]);
    await one.close(['events']);
  });

  const events = (count: number): EventToRecord[] =>
    Array.from({ length: count }, () => ({
      id: `evt_log_${++n}`,
      type: 'order.placed',
      locationId: 'loc-log',
      at: new Date(),
      rank: [n, 0],
      data: {},
      owed: [],
    }));
  const record = async (repo: EventLogRepo, batch: EventToRecord[]) =>
    [...(await repo.record(batch, new Date())).recorded.values()].map((doc) => [doc.eventId, doc._id] as const);
  const places = (recorded: (readonly [string, number])[]) => recorded.map(([, place]) => place);

  it('records a batch at the places after the last, in its order; one process again in one insert', async () => {
    const first = await record(one.repos.events, events(3));
    const start = first[0]![1];
    expect(places(first)).toEqual([start, start + 1, start + 2]);
    one.resetCount();
    const next = await record(one.repos.events, events(2));
    expect(places(next)).toEqual([start + 3, start + 4]);
    expect(one.commands()).toBe(1);
  });

  it("takes the next places after another process's, when it recorded meanwhile", async () => {
    await record(one.repos.events, events(1));
    const theirs = await record(other.repos.events, events(2));
    const mine = await record(one.repos.events, events(2)); // where it last left off is taken: it collides, reads the top, goes on
    expect(places(mine)).toEqual([theirs[1]![1] + 1, theirs[1]![1] + 2]);
  });

  it('records an event once: recorded again, it is found where it is, and the rest go on top', async () => {
    const [a, b] = events(2);
    const first = await record(other.repos.events, [a!]);
    const { recorded, added } = await one.repos.events.record([a!, b!], new Date());
    const again = [...recorded.values()].map((doc) => [doc.eventId, doc._id] as const);
    expect(again).toEqual([first[0], [b!.id, first[0]![1] + 1]]);
    expect(added.map((doc) => doc.eventId)).toEqual([b!.id]);
    expect(await record(other.repos.events, [a!, b!])).toEqual(again);
  });

  it('gives every event of writers recording at once a place of its own, each batch in its order', async () => {
    const batches = Array.from({ length: 12 }, () => events(3));
    const recorded = await Promise.all(batches.map((batch, i) => record((i % 2 ? one : other).repos.events, batch)));
    const all = recorded.flat();
    expect(new Set(places(all)).size).toBe(all.length);
    for (const batch of recorded) expect(places(batch)).toEqual([...places(batch)].sort((x, y) => x - y));
  });

  it('settles deliveries in one update: each event stops owing what was settled, once, and still owes the rest', async () => {
    const owed = (i: number, subscriptions: string[]) =>
      subscriptions.map((subscriptionId) => ({ webhookId: `msg_${i}_${subscriptionId}_${n}`, subscriptionId }));
    const batch = events(3).map((event, i) => ({ ...event, owed: owed(i, ['sub_a', 'sub_b']) }));
    const { recorded } = await one.repos.events.record(batch, new Date());
    const ofSub = (sub: string, from: typeof batch) =>
      from.map((event) => ({
        eventId: event.id,
        webhookId: event.owed.find((o) => o.subscriptionId === sub)!.webhookId,
      }));

    one.resetCount();
    await one.repos.events.settledAll(ofSub('sub_a', batch));
    expect(one.commands()).toBe(1);
    // settled again (a batch run again, a drop racing a delivery): nothing is counted twice
    await one.repos.events.settledAll(ofSub('sub_a', batch.slice(0, 2)));
    let now = await one.repos.events.findByEventIds(batch.map((event) => event.id));
    for (const event of batch) {
      expect(now.get(event.id)!.pendingDeliveries).toBe(1);
      expect(Object.values(now.get(event.id)!.undelivered!)).toEqual(['sub_b']);
    }
    expect(
      (await one.repos.events.owing({ afterSeq: recorded.get(batch[0]!.id)!._id - 1, limit: 10 })).map(
        (doc) => doc.eventId,
      ),
    ).toEqual(batch.map((event) => event.id));

    // one event's two deliveries in one call, beside another's: both settled
    await one.repos.events.settledAll([...ofSub('sub_b', batch.slice(0, 1)), ...ofSub('sub_b', batch.slice(1))]);
    now = await one.repos.events.findByEventIds(batch.map((event) => event.id));
    for (const event of batch) expect(now.get(event.id)).toMatchObject({ pendingDeliveries: 0, undelivered: {} });
    expect(await one.repos.events.owing({ afterSeq: recorded.get(batch[0]!.id)!._id - 1, limit: 10 })).toEqual([]);
  });

  it('settles two deliveries of one event given together', async () => {
    const [event] = events(1).map((e) => ({
      ...e,
      owed: [
        { webhookId: `msg_x_${n}`, subscriptionId: 'sub_x' },
        { webhookId: `msg_y_${n}`, subscriptionId: 'sub_y' },
      ],
    }));
    await one.repos.events.record([event!], new Date());
    await one.repos.events.settledAll(event!.owed.map(({ webhookId }) => ({ eventId: event!.id, webhookId })));
    expect((await one.repos.events.findByEventIds([event!.id])).get(event!.id)).toMatchObject({
      pendingDeliveries: 0,
      undelivered: {},
    });
  });
});
