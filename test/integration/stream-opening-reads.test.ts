/**
 * Streams opening together share their first reads (stream/opening-reads.ts), on MongoDB (the
 * stand-in, or MONGO_URL): one batch reads their locations' work and their sessions in two
 * commands, and each stream still gets its own replay, above its own cursor, and its own session.
 */
import { OpeningReads } from '@pos/api/stream/opening-reads';
import type { Repos } from '@pos/shared/store/repos';
import { countedStore, type CountedStore } from '../support/counted-store';

const DB = `opening-reads-${process.pid}`;

describe('the reads of opening streams', () => {
  let store: CountedStore;
  let repos: Repos;

  beforeAll(async () => {
    store = await countedStore(DB);
    repos = store.repos;
  });
  afterAll(() => store.close(['orders', 'commands', 'sessions']));

  it('reads the work and sessions of streams opening together in two commands, each its own part', async () => {
    const now = new Date();
    const placed = async (locationId: string, number: number, state: 'PLACED' | 'SELECTING' = 'PLACED') =>
      repos.orders.insert({ locationId, number, state, rows: [] }, now);
    await Promise.all([
      placed('loc-a', 1),
      placed('loc-a', 2),
      placed('loc-a', 3, 'SELECTING'),
      placed('loc-a', 4),
      placed('loc-b', 1),
    ]);
    await repos.commands.insert({ locationId: 'loc-b', number: 5, kind: 'EXPORT_DATA' }, now, 60_000);
    const session = await repos.sessions.create({ type: 'SERVICE', locationId: 'loc-a', keyHash: 'k' }, now);
    const reads = new OpeningReads(repos);

    store.resetCount();
    const [fromStart, fromTwo, other, gone] = await Promise.all([
      reads.read({ locationId: 'loc-a', cursor: {}, sessionId: session._id }),
      reads.read({ locationId: 'loc-a', cursor: { orderNumber: 2 }, sessionId: undefined }),
      reads.read({ locationId: 'loc-b', cursor: { orderNumber: 0, commandNumber: 0 }, sessionId: undefined }),
      reads.read({ locationId: 'loc-c', cursor: {}, sessionId: 'no-such-session' }),
    ]);
    expect(store.commands()).toBe(2);

    expect(fromStart.replay.orders.map((event) => event.number)).toEqual([1, 2, 4]);
    expect(fromStart.session?._id).toBe(session._id);
    expect(fromTwo.replay.orders.map((event) => event.number)).toEqual([4]);
    expect(fromTwo).not.toHaveProperty('session'); // an operator's stream has none to read
    // one location's records are built once for the streams that read them
    expect(fromTwo.replay.orders[0]).toBe(fromStart.replay.orders[2]);
    expect(other.replay.orders.map((event) => event.number)).toEqual([1]);
    expect(other.replay.commands.map((event) => event.number)).toEqual([5]);
    expect(gone).toEqual({ replay: { orders: [], commands: [] }, session: null });
  });
});
