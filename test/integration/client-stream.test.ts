/**
 * ClientStream, the state machine of one open stream, driven directly over a real HTTP response:
 * its replay, live events and what it buffers, its hold and re-read after a Redis loss (what it
 * sends again and what it does not), and how each end reaches the client. Its session is read
 * from MongoDB (the stand-in, or MONGO_URL).
 */
import { MongoClient } from 'mongodb';
import { RESYNC_MARGIN_MS, RETRY_MS, type StreamReader } from '@pos/api/stream/client-stream';
import type { Replay, ResyncRead } from '@pos/api/stream/replay';
import { StreamClock } from '@pos/api/stream/stream-clock';
import { commandFrame, orderFrame, type StreamFrame } from '@pos/api/stream/stream-frame';
import type { CommandRecord, OrderRecord } from '@pos/shared/domain/records';
import { createRepos, type Repos } from '@pos/shared/store/repos';
import type { SessionDoc } from '@pos/shared/store/documents';
import { startStreamHarness, type StreamHarness } from '../support/stream-harness';

const order = (number: number, state: OrderRecord['state'] = 'PLACED'): OrderRecord => ({
  number,
  state,
  orderTime: '2026-11-25T10:00:00.000Z',
  guestCount: 1,
  rows: [{ rowNumber: 1, productId: 'p', name: 'Burger', quantity: 1, unitPrice: 100 }],
});
const command = (number: number): CommandRecord => ({ number, state: 'PLACED', exportMainData: true });
const EMPTY: Replay = { orders: [], commands: [] };

describe('ClientStream', () => {
  let mongo: MongoClient;
  let repos: Repos;
  let clock: StreamClock;
  let harness: StreamHarness;
  const connect = (reader: StreamReader) => harness.connect(reader);

  beforeAll(async () => {
    mongo = await MongoClient.connect(process.env.TEST_MONGO_URL!);
    repos = createRepos(mongo.db(`client-stream-${process.pid}`));
    harness = await startStreamHarness(repos, () => clock);
  });
  beforeEach(() => (clock = new StreamClock(60_000, 600_000)));
  afterEach(() => harness.endAll());
  afterAll(async () => {
    await harness.close();
    await mongo.close();
  });

  const operator: StreamReader = { kind: 'operator', locationId: 'loc-1' };

  it('writes its head and the replay, then live events, each with its position as id', async () => {
    const { stream, client } = await connect(operator);
    stream.attach({ orders: [orderFrame(order(1))], commands: [commandFrame(command(1))] });
    await client.eventCount(2);
    expect(client.headers['content-type']).toBe('text/event-stream');
    expect(client.headers['x-request-id']).toBe('req-1');
    expect(client.retries).toHaveLength(1);
    expect(stream.deliver(orderFrame(order(2)))).toBe(true);
    const events = await client.eventCount(3);
    expect(events.map((e) => [e.event, e.id])).toEqual([
      ['order', '1.0'],
      ['command', '1.1'],
      ['order', '2.1'],
    ]);
  });

  it('buffers live events while its replay is read, and sends those the replay does not cover once', async () => {
    const { stream, client } = await connect(operator);
    const first = orderFrame(order(1));
    expect(stream.deliver(first)).toBe(false);
    expect(stream.deliver(orderFrame(order(2)))).toBe(false);
    stream.attach({ orders: [orderFrame(order(1))], commands: [] });
    const events = await client.eventCount(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events.map((e) => e.json<OrderRecord>().number)).toEqual([1, 2]);
  });

  it("keeps operators' announcements from a register's stream", async () => {
    const created = await repos.sessions.create({ type: 'SERVICE', locationId: 'loc-1', keyHash: 'k' }, new Date());
    const { stream, client } = await connect({ kind: 'register', session: created, keyHash: 'k' });
    stream.attach(EMPTY);
    await client.preamble();
    const announcement: StreamFrame = { ...orderFrame(order(1)), operatorOnly: true };
    expect(stream.deliver(announcement)).toBe(false);
    expect(stream.deliver(orderFrame(order(1)))).toBe(true);
    await client.eventCount(1);
  });

  it('after a Redis loss: holds live events, sends what the re-read finds it had not sent, then the held events', async () => {
    const { stream, client } = await connect(operator);
    const sent = orderFrame(order(1), { version: 2 });
    stream.attach({ orders: [sent], commands: [] });
    await client.eventCount(1);
    const lostAt = Date.now();
    stream.noteLoss(lostAt);
    stream.holdForResync(lostAt);
    expect(stream.awaitsResync).toBe(true);
    expect(stream.deliver(orderFrame(order(3)))).toBe(false);
    const part = stream.beginResync();
    expect(part).toMatchObject({ orderNumber: 1, commandNumber: 0, changedSince: lostAt - RESYNC_MARGIN_MS });
    expect(stream.awaitsResync).toBe(false);
    const read: ResyncRead = {
      placed: [orderFrame(order(2), { version: 1 })],
      // order 1 as it was sent (not news), and order 1 changed since (news)
      changed: [
        { event: orderFrame(order(1), { version: 2 }), updatedAt: lostAt - 100 },
        { event: orderFrame(order(1, 'COMPLETED'), { version: 3 }), updatedAt: lostAt },
      ],
      commands: [],
      sessions: new Map(),
    };
    stream.takeResync(read, new Date());
    const events = await client.eventCount(4);
    expect(events.map((e) => [e.json<OrderRecord>().number, e.json<OrderRecord>().state])).toEqual([
      [1, 'PLACED'],
      [1, 'COMPLETED'],
      [2, 'PLACED'],
      [3, 'PLACED'],
    ]);
    expect(stream.deliver(orderFrame(order(4)))).toBe(true);
  });

  it('ended by a shutdown, sends a fresh reconnection delay (at most the base) before it closes', async () => {
    const { stream, client, ends } = await connect(operator);
    stream.attach(EMPTY);
    await client.preamble();
    stream.end('shutdown');
    await client.end();
    expect(ends).toEqual(['shutdown']);
    expect(client.retries).toHaveLength(2);
    for (const ms of client.retries) expect(ms).toBeLessThanOrEqual(RETRY_MS);
  });

  it('keeps no copy of the head it sent, and ends as a response still: no second head, the client sees the end', async () => {
    const { stream, client, res } = await connect(operator);
    stream.attach(EMPTY);
    await client.preamble();
    expect(res.headersSent).toBe(true);
    // Node would keep the whole head, its X-Request-Id too, for the stream's life
    expect(String((res as unknown as { _header: unknown })._header)).not.toContain('req-1');
    stream.end('shutdown');
    await client.end();
    expect(client.raw).not.toContain('HTTP/1.1');
    expect(client.retries).toHaveLength(2);
  });

  it("a register's re-read that finds its session closed ends the stream, and the client sees its end", async () => {
    const created: SessionDoc = await repos.sessions.create(
      { type: 'SERVICE', locationId: 'loc-1', keyHash: 'k' },
      new Date(),
    );
    const { stream, client, ends } = await connect({ kind: 'register', session: created, keyHash: 'k' });
    stream.attach(EMPTY);
    await client.preamble();
    stream.holdForResync(Date.now());
    stream.beginResync();
    stream.takeResync(
      {
        placed: [],
        changed: [],
        commands: [],
        sessions: new Map([[created._id, { ...created, closedAt: new Date() }]]),
      },
      new Date(),
    );
    await client.end();
    expect(ends).toEqual(['session-closed']);
    expect(stream.isEnded).toBe(true);
  });

  it('ends after three failed re-reads in a row; one that comes in before resets the count', async () => {
    const { stream, client, ends } = await connect(operator);
    stream.attach(EMPTY);
    await client.preamble();
    stream.holdForResync(Date.now());
    for (let i = 0; i < 2; i++) {
      stream.beginResync();
      stream.resyncFailed();
    }
    expect(stream.isEnded).toBe(false);
    expect(stream.awaitsResync).toBe(true);
    stream.beginResync();
    stream.resyncFailed();
    await client.end();
    expect(ends).toEqual(['resync-failed']);
  });

  it('a loss seen while its first replay is read asks for a re-read once it is sent', async () => {
    const { stream, client, resyncNeeded } = await connect(operator);
    stream.noteLoss(Date.now());
    stream.holdForResync(Date.now()); // not live yet: it waits until its replay is out
    stream.attach({ orders: [orderFrame(order(1))], commands: [] });
    await client.eventCount(1);
    expect(resyncNeeded()).toBe(1);
    expect(stream.awaitsResync).toBe(true);
  });

  it('reads its replay and its session from MongoDB when prepared, and ends at once if the session closed meanwhile', async () => {
    const created = await repos.sessions.create(
      { type: 'SERVICE', locationId: 'loc-prepare', keyHash: 'k' },
      new Date(),
    );
    const number = (await repos.locations.nextNumber('loc-prepare', 'orderSeq')) ?? 7;
    await repos.orders.insert({ locationId: 'loc-prepare', number, state: 'PLACED', rows: order(1).rows }, new Date());
    const { stream, client } = await connect({ kind: 'register', session: created, keyHash: 'k' });
    const replay = await stream.prepare();
    expect(replay.orders.map((e) => e.number)).toEqual([number]);
    stream.attach(replay);
    await client.eventCount(1);

    await repos.sessions.close(created._id, new Date());
    const second = await connect({ kind: 'register', session: created, keyHash: 'k' });
    second.stream.attach(await second.stream.prepare());
    await second.client.end();
    expect(second.ends).toEqual(['session-closed']);
    expect(second.client.events).toEqual([]);
  });

  it('ends as client-gone when the client disconnects', async () => {
    const { stream, client, ends } = await connect(operator);
    stream.attach(EMPTY);
    await client.preamble();
    client.close();
    await stream.done;
    expect(ends).toEqual(['client-gone']);
  });
});
