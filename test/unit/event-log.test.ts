/**
 * Recording in the event log (store/event-log.ts), on MongoDB (the stand-in, or MONGO_URL): each
 * event once, each at the next place, in the order given, whichever of several writers records;
 * a writer alone records a batch in one insert, without reading the top.
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
    Array.from({ length: count }, () => ({ id: `evt_log_${++n}`, type: 'order.placed', locationId: 'loc-log', at: new Date(), rank: [n, 0], data: {}, owed: [] }));
  const record = async (repo: EventLogRepo, batch: EventToRecord[]) => [...(await repo.record(batch, new Date())).recorded.values()].map((doc) => [doc.eventId, doc._id] as const);
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
});
