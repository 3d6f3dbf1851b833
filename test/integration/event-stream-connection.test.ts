/**
 * What happens around the events: keepalive, timeout, clients that vanish or stall, Redis
 * reconnects, and shutdown with streams open. In-process nodes, so that their insides
 * (subscriptions, timers) can be counted.
 */
import net from 'node:net';
import Redis from 'ioredis';
import type { OrderDoc, OrderRecord } from '@pos/shared/domain/records';
import { registerAt } from '../support/fixtures';
import { sampleRows } from '../support/http';
import { streamPath, TestStream } from '../support/sse-client';
import { startStack, useStack } from '../support/stack';
import { eventually } from '../support/wait';

type Stack = Awaited<ReturnType<typeof startStack>>;

const activeTimeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('event stream keepalive and timeout', () => {
  const stack = useStack({ SSE_KEEPALIVE: '100ms', SSE_TIMEOUT: '1500ms' }, { worker: false });

  it('writes a `: keepalive` comment every SSE_KEEPALIVE', async () => {
    const { key } = await registerAt(stack, 'keepalive');
    const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: key });
    try {
      await stream.waitFor(() => stream.comments.filter((c) => c === 'keepalive').length >= 3, 'three keepalives');
      expect(stream.raw).toMatch(/^retry: \d+\n\n(: keepalive\n\n)+$/);
    } finally {
      stream.close();
    }
  });

  it('ends the stream after SSE_TIMEOUT', async () => {
    const { key } = await registerAt(stack, 'timeout');
    const opened = Date.now();
    const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: key });
    await stream.end(10_000);
    // SSE_TIMEOUT, jittered by up to 10% either way
    expect(Date.now() - opened).toBeGreaterThanOrEqual(0.9 * 1_500 - 50);
    await eventually(() => stack.api.deps.hub.openStreams === 0, 'no open stream');
  });
});

describe('event stream timeout jitter', () => {
  const TIMEOUT_MS = 5_000;
  const stack = useStack({ SSE_TIMEOUT: `${TIMEOUT_MS}ms`, SSE_MAX_STREAMS_PER_SESSION: '20' }, { worker: false });

  it('20 streams opened together end spread over SSE_TIMEOUT ± 10%, not together', async () => {
    const { key } = await registerAt(stack, 'jitter');
    const lifetimes = await Promise.all(
      Array.from({ length: 20 }, async () => {
        // From before the request: the node's clock cannot take the stream earlier, however late the head arrives
        const opened = Date.now();
        const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: key });
        await stream.end(TIMEOUT_MS * 2);
        return Date.now() - opened;
      }),
    );
    for (const ms of lifetimes) {
      expect(ms).toBeGreaterThanOrEqual(0.9 * TIMEOUT_MS - 20);
      expect(ms).toBeLessThanOrEqual(1.1 * TIMEOUT_MS + 2_000);
    }
    // Without jitter all 20 lived SSE_TIMEOUT to within a few milliseconds. With it, all 20 in
    // 400 ms (8 of the 20 steps of the 1,000 ms window) has odds of about one in ten million.
    expect(Math.max(...lifetimes) - Math.min(...lifetimes)).toBeGreaterThan(400);
  }, 30_000);
});

describe('event stream resources', () => {
  let stack: Stack;
  let redis: Redis;
  const prefix = () => stack.env.REDIS_PREFIX!;
  const locationChannels = async () => (await redis.pubsub('CHANNELS', `${prefix()}:loc:*`)) as string[];

  beforeAll(async () => {
    // 20 streams per register key below: above the default per-session cap of 4
    stack = await startStack(
      { SSE_MAX_BUFFER: '1024', SHUTDOWN_GRACE: '30s', SSE_MAX_STREAMS_PER_SESSION: '20' },
      { worker: false },
    );
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  afterAll(async () => {
    redis.disconnect();
    await stack.close();
  });

  it('200 streams opened and dropped leave no subscription, timer or stream behind', async () => {
    const { deps } = stack.api;
    const registers = await Promise.all(Array.from({ length: 10 }, (_, i) => registerAt(stack, `many-${i}`)));
    const baseChannels = deps.subscriber.channelCount;
    const baseTimeouts = activeTimeouts();
    const baseListeners = deps.subscriber.listenerCount('resubscribed');
    expect(await locationChannels()).toEqual([]);

    const streams = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        TestStream.open(`${stack.origin}${streamPath}`, { apiKey: registers[i % 10]!.key }),
      ),
    );
    try {
      await Promise.all(streams.map((s) => s.preamble()));
      expect(streams.every((s) => s.status === 200)).toBe(true);
      expect(deps.hub.openStreams).toBe(200);
      expect(deps.hub.locationCount).toBe(10);
      expect(deps.subscriber.channelCount).toBe(baseChannels + 10);
      expect((await locationChannels()).length).toBe(10);
      expect((await deps.metrics.streamsOpen.get()).values[0]!.value).toBe(200);
      // Keepalives and timeouts come from the node's clock: two timers for all the streams, none each.
      // (Redis commands in flight hold a timer each until answered: the openings' presence write)
      expect(deps.hub.clock.size).toBe(200);
      await eventually(() => activeTimeouts() < baseTimeouts + 10, 'no timer per stream');
    } finally {
      for (const stream of streams) stream.close();
    }

    await eventually(() => deps.hub.openStreams === 0, 'every stream gone');
    await eventually(async () => (await locationChannels()).length === 0, 'no location channel subscribed in Redis');
    expect(deps.hub.locationCount).toBe(0);
    expect(deps.subscriber.channelCount).toBe(baseChannels);
    expect((await deps.metrics.streamsOpen.get()).values[0]!.value).toBe(0);
    expect(deps.subscriber.listenerCount('resubscribed')).toBe(baseListeners);
    expect(deps.hub.clock.size).toBe(0);
    await eventually(() => activeTimeouts() <= baseTimeouts, 'the clock\u2019s timers cleared');
  });

  it('drops a client that stops reading, and keeps one that reads', async () => {
    const { deps } = stack.api;
    const { locationId, key } = await registerAt(stack, 'stalled');
    const healthy = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: key });
    const stalled = net.connect(stack.api.port, '127.0.0.1');
    let stalledClosed = false;
    stalled.on('close', () => (stalledClosed = true));
    stalled.on('error', () => undefined);
    try {
      stalled.write(`GET ${streamPath} HTTP/1.1\r\nHost: localhost\r\napi_key: ${key}\r\n\r\n`);
      stalled.pause();
      await eventually(() => deps.hub.openStreams === 2, 'both streams open');

      // big order events, published as the workers publish them, until the stalled client is dropped
      const rows = Array.from({ length: 200 }, (_, i) => ({
        rowNumber: i + 1,
        productId: `p${i}`,
        name: 'Burger',
        quantity: 1,
        unitPrice: 100,
        notes: 'n'.repeat(500),
      }));
      let published = 0;
      while (deps.hub.openStreams === 2 && published < 600) {
        for (let i = 0; i < 10; i += 1) {
          published += 1;
          const now = new Date();
          const doc: OrderDoc = {
            _id: `${locationId}:${published}`,
            locationId,
            number: published,
            state: 'PLACED',
            version: 0,
            failureCount: 0,
            appliedJobs: [],
            rows,
            guestCount: 1,
            orderTime: now,
            createdAt: now,
            updatedAt: now,
          };
          await deps.announcer.order(doc);
        }
        await healthy.eventCount(published, 10_000);
      }
      expect(deps.hub.openStreams).toBe(1);
      // what the kernel holds still reaches the client; then the connection is closed
      stalled.resume();
      await eventually(() => stalledClosed, 'the stalled connection closed');
      expect(healthy.isEnded).toBe(false);
      expect(healthy.events.map((e) => e.json<OrderRecord>().number)).toEqual(
        Array.from({ length: published }, (_, i) => i + 1),
      );
    } finally {
      healthy.close();
      stalled.destroy();
    }
  });

  it('sends a replay larger than SSE_MAX_BUFFER to a client that reads it', async () => {
    const { deps } = stack.api;
    const { locationId, key } = await registerAt(stack, 'big-replay');
    const rows = Array.from({ length: 100 }, (_, i) => ({
      rowNumber: i + 1,
      productId: `p${i}`,
      name: 'Burger',
      quantity: 1,
      unitPrice: 100,
      notes: 'n'.repeat(500),
    }));
    for (let i = 0; i < 20; i += 1) {
      const number = (await deps.repos.locations.nextNumber(locationId, 'orderSeq'))!;
      await deps.repos.orders.insert({ locationId, number, state: 'PLACED', rows }, new Date());
    }
    const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: key });
    try {
      await stream.eventCount(20);
      const live = await stack.admin.createOrder(locationId, sampleRows);
      await stream.eventCount(21);
      expect(stream.events[20]!.json()).toEqual(live);
      expect(stream.raw.length).toBeGreaterThan(20 * 1024);
      expect(stream.isEnded).toBe(false);
    } finally {
      stream.close();
    }
  });

  it('after a Redis reconnect, sends what was published while the subscriber was away', async () => {
    const { deps } = stack.api;
    const { locationId, key } = await registerAt(stack, 'reconnect');
    const o1 = await stack.admin.createOrder(locationId, sampleRows);
    const o2 = await stack.admin.createOrder(locationId, sampleRows);
    const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: key });
    try {
      await stream.eventCount(2);
      // Work written without its announcement: exactly what a publish lost to the outage looks like.
      const now = new Date();
      const number = (await deps.repos.locations.nextNumber(locationId, 'orderSeq'))!;
      const o3 = await deps.repos.orders.insert(
        { locationId, number, state: 'PLACED', rows: sampleRows.map((r, i) => ({ rowNumber: i + 1, ...r })) },
        now,
      );
      const first = (await deps.repos.orders.find({ locationId }, o1.number))!;
      const o1Done = (await deps.repos.orders.applyChange(
        first,
        { state: 'COMPLETED', completeTime: now },
        'lost-job',
        now,
      ))!;
      const commandNumber = (await deps.repos.locations.nextNumber(locationId, 'commandSeq'))!;
      const c1 = await deps.repos.commands.insert(
        { locationId, number: commandNumber, kind: 'REQUEST_BILL' },
        now,
        60_000,
      );

      // The server drops the node's subscriber connection; ioredis reconnects and resubscribes.
      const socket = (deps.subscriber as unknown as { redis: Redis }).redis.stream;
      const killed = await redis.client('KILL', 'ADDR', `${socket.localAddress}:${socket.localPort}`);
      expect(killed).toBe(1);

      await stream.eventCount(5, 10_000);
      const marker = await stack.admin.createOrder(locationId, sampleRows);
      await stream.eventCount(6);
      expect(stream.events.map((e) => [e.id, e.json()])).toEqual([
        ['1.0', o1],
        ['2.0', o2],
        // o2 is unchanged and not sent again
        ['2.0', { ...o1, state: 'COMPLETED', completeTime: o1Done.completeTime!.toISOString() }],
        [
          '3.0',
          { number: o3.number, state: 'PLACED', rows: o3.rows, guestCount: 1, orderTime: o3.orderTime!.toISOString() },
        ],
        ['3.1', { number: c1.number, state: 'PLACED', paymentNumber: 1 }],
        ['4.1', marker],
      ]);
      expect(stream.isEnded).toBe(false);
    } finally {
      stream.close();
    }
  });

  it('sends an order event delivered twice (a publish resent after a reconnect) once, and never a state it has sent a later one of', async () => {
    const { locationId, key } = await registerAt(stack, 'repeats');
    const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: key });
    try {
      await stream.preamble();
      const placed = await stack.admin.createOrder(locationId, sampleRows);
      await stream.eventCount(1);
      const message = (record: OrderRecord, version: number) =>
        JSON.stringify({ type: 'order', record, failureCount: 0, version });
      const channel = `${prefix()}:loc:${locationId}`;
      // the creation's announcement again, as a publish that Redis ran twice
      await redis.publish(channel, message(placed, 0));
      const completed: OrderRecord = { ...placed, state: 'COMPLETED', completeTime: new Date().toISOString() };
      await redis.publish(channel, message(completed, 1));
      // the PLACED state overtaken by the COMPLETED one sent before it arrives
      await redis.publish(channel, message(placed, 0));
      const marker = await stack.admin.createOrder(locationId, sampleRows);
      await stream.eventCount(3);
      expect(stream.events.map((e) => [e.id, e.json()])).toEqual([
        ['1.0', placed],
        ['1.0', completed],
        ['2.0', marker],
      ]);
    } finally {
      stream.close();
    }
  });

  it('after a Redis reconnect, ends a stream whose session was closed meanwhile; the others of the location each get their part', async () => {
    const { deps } = stack.api;
    const location = await stack.admin.createLocation('reconnect-close');
    const locationId = location.id;
    const revoked = await stack.admin.createServiceSession(locationId, 'revoked-register');
    const kept = await stack.admin.createServiceSession(locationId, 'kept-register');
    const newCommand = async () => {
      const number = (await deps.repos.locations.nextNumber(locationId, 'commandSeq'))!;
      return deps.repos.commands.insert({ locationId, number, kind: 'REQUEST_BILL' }, new Date(), 60_000);
    };
    const commandEvent = (number: number) => ({ number, state: 'PLACED', paymentNumber: 1 });

    const c1 = await newCommand();
    const early = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: kept.apiKey });
    await early.eventCount(1);
    // unannounced: the streams opened from now on replay it, `early` never hears of it
    const c2 = await newCommand();
    const late = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: kept.apiKey });
    const closing = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey: revoked.apiKey });
    try {
      await late.eventCount(2);
      await closing.eventCount(2);

      // What the outage loses: a command's announcement and the session's `session-closed`.
      const c3 = await newCommand();
      expect(await deps.repos.sessions.close(revoked.sessionId, new Date())).toBe(true);

      const socket = (deps.subscriber as unknown as { redis: Redis }).redis.stream;
      const killed = await redis.client('KILL', 'ADDR', `${socket.localAddress}:${socket.localPort}`);
      expect(killed).toBe(1);

      await closing.end(10_000);
      expect(closing.isEnded).toBe(true);
      expect(closing.events.map((e) => [e.id, e.json()])).toEqual([
        ['0.1', commandEvent(c1.number)],
        ['0.2', commandEvent(c2.number)],
      ]);

      await early.eventCount(3, 10_000);
      await late.eventCount(3, 10_000);
      const marker = await stack.admin.createOrder(locationId, sampleRows);
      await early.eventCount(4);
      await late.eventCount(4);
      // one read for the location, from the lowest cursor (early's), each stream sending what lies above its own
      expect(early.events.map((e) => [e.id, e.json()])).toEqual([
        ['0.1', commandEvent(c1.number)],
        ['0.2', commandEvent(c2.number)],
        ['0.3', commandEvent(c3.number)],
        ['1.3', marker],
      ]);
      expect(late.events.map((e) => [e.id, e.json()])).toEqual([
        ['0.1', commandEvent(c1.number)],
        ['0.2', commandEvent(c2.number)],
        ['0.3', commandEvent(c3.number)],
        ['1.3', marker],
      ]);
      expect(early.isEnded || late.isEnded).toBe(false);
      await eventually(() => deps.hub.openStreams === 2, 'the revoked stream gone, the two others open');
    } finally {
      early.close();
      late.close();
      closing.close();
    }
  });

  it('ends every open stream at shutdown without waiting for the grace period', async () => {
    // a node of its own to shut down: the file's other tests keep theirs
    const node = await startStack({ SHUTDOWN_GRACE: '30s' }, { worker: false });
    let closed = false;
    try {
      const { key } = await registerAt(node, 'shutdown');
      const streams = await Promise.all(
        [1, 2, 3].map(() => TestStream.open(`${node.origin}${streamPath}`, { apiKey: key })),
      );
      await Promise.all(streams.map((s) => s.preamble()));
      const started = Date.now();
      closed = true;
      await node.close();
      // SHUTDOWN_GRACE is 30 s: a stream left open would hold close() that long
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(streams.every((s) => s.isEnded)).toBe(true);
    } finally {
      if (!closed) await node.close();
    }
  });
});
