/**
 * What one key, or many, can hold of a node through event streams: SSE_MAX_STREAMS_PER_SESSION
 * (the newest stream of a session ends its oldest), SSE_MAX_STREAMS (a 429 beyond it), the
 * operators' share (SSE_MAX_OPERATOR_STREAMS, SSE_MAX_STREAMS_PER_OPERATOR: registers are never
 * locked out by operators), and a replay written only as fast as the client reads it (one that
 * reads nothing is dropped).
 */
import net from 'node:net';
import { registerAt } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { metricValue } from '../support/metrics';
import { streamPath, TestStream } from '../support/sse-client';
import { useStack } from '../support/stack';
import { eventually } from '../support/wait';

describe('event stream limits', () => {
  const stack = useStack(
    { SSE_MAX_STREAMS_PER_SESSION: '2', SSE_MAX_STREAMS: '4', SSE_MAX_BUFFER: '1024', SSE_KEEPALIVE: '1s' },
    { worker: false },
  );
  const open: TestStream[] = [];

  /** Opens a stream and waits for its preamble. */
  const openStream = async (apiKey: string) => {
    const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey });
    open.push(stream);
    if (stream.status === 200) await stream.preamble();
    return stream;
  };
  const closeAll = async () => {
    for (const stream of open.splice(0)) stream.close();
    await eventually(() => stack.api.deps.hub.openStreams === 0, 'every stream closed');
  };

  afterEach(closeAll);

  it('ends the oldest stream of a session that opens one more than SSE_MAX_STREAMS_PER_SESSION', async () => {
    const { key, location } = await registerAt(stack, 'Per session');
    const first = await openStream(key);
    const second = await openStream(key);
    const third = await openStream(key);
    await first.end();
    expect(first.isEnded).toBe(true);
    expect(stack.api.deps.hub.openStreams).toBe(2);

    const order = await stack.admin.createOrder(location.id, sampleRows);
    for (const stream of [second, third]) expect((await stream.eventCount(1))[0]!.json()).toEqual(order);
    expect(second.isEnded || third.isEnded).toBe(false);
  });

  it('refuses a new stream on a node at SSE_MAX_STREAMS with a 429, unless it replaces one of its session', async () => {
    const a = await registerAt(stack, 'Node A');
    const b = await registerAt(stack, 'Node B');
    const c = await registerAt(stack, 'Node C');
    for (const key of [a.key, a.key, b.key, b.key]) expect((await openStream(key)).status).toBe(200);

    const refused = await call('GET', `${stack.origin}${streamPath}`, { apiKey: c.key });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.json()).toMatchObject({ title: 'Too many requests', status: 429, instance: streamPath });

    // A's newest replaces A's oldest: the node holds no more than before.
    const replacing = await openStream(a.key);
    expect(replacing.status).toBe(200);
    await open[0]!.end();
    expect(stack.api.deps.hub.openStreams).toBe(4);
  });

  describe('a replay larger than what the kernel buffers (about 4 MB on loopback)', () => {
    let locationId: string;
    let key: string;
    const ORDERS = 200;

    beforeAll(async () => {
      ({
        key,
        location: { id: locationId },
      } = await registerAt(stack, 'Big replay'));
      // 200 orders of 100 rows with long notes: about 11 MB of events
      const rows = Array.from({ length: 100 }, (_, i) => ({
        rowNumber: i + 1,
        productId: `p${i}`,
        name: 'Burger',
        quantity: 1,
        unitPrice: 100,
        notes: 'n'.repeat(500),
      }));
      const { orders, locations } = stack.api.deps.repos;
      for (let i = 0; i < ORDERS; i += 1) {
        const number = (await locations.nextNumber(locationId, 'orderSeq'))!;
        await orders.insert({ locationId, number, state: 'PLACED', rows }, new Date());
      }
    });

    it('drops a client that reads none of it, and counts it as slow', async () => {
      const slowDrops = () => metricValue(stack.origin, 'pos_streams_ended_total', { reason: 'slow-client' });
      const dropsBefore = await slowDrops();
      const stalled = net.connect(stack.api.port, '127.0.0.1');
      let closed = false;
      stalled.on('close', () => (closed = true));
      stalled.on('error', () => undefined);
      try {
        stalled.write(`GET ${streamPath} HTTP/1.1\r\nHost: localhost\r\napi_key: ${key}\r\n\r\n`);
        stalled.pause();
        await eventually(() => stack.api.deps.hub.openStreams === 1, 'the stream open');
        // no progress for a keepalive interval while the replay waits: dropped as too slow
        await eventually(() => stack.api.deps.hub.openStreams === 0, 'the stalled stream dropped', 15_000);
        stalled.resume();
        await eventually(() => closed, 'the connection closed');
        expect(await slowDrops()).toBe(dropsBefore + 1);
      } finally {
        stalled.destroy();
      }
    });

    it('sends all of it, page by page, to a client that reads, then goes live', async () => {
      const stream = await openStream(key);
      await stream.eventCount(ORDERS, 30_000);
      expect(stream.events.map((e) => e.json().number)).toEqual(Array.from({ length: ORDERS }, (_, i) => i + 1));
      const live = await stack.admin.createOrder(locationId, sampleRows);
      await stream.eventCount(ORDERS + 1);
      expect(stream.events[ORDERS]!.json()).toEqual(live);
      expect(stream.isEnded).toBe(false);
    });
  });
});

describe("operators' share of a node's streams", () => {
  const stack = useStack({ SSE_MAX_STREAMS: '12', SSE_MAX_STREAMS_PER_OPERATOR: '2' }, { worker: false });
  const open: TestStream[] = [];
  const operatorStream = async (token: string, locationId: string) => {
    const stream = await TestStream.open(`${stack.origin}/admin/v1/locations/${locationId}/stream`, {
      headers: { authorization: `Bearer ${token}` },
    });
    open.push(stream);
    if (stream.status === 200) await stream.preamble();
    return stream;
  };

  // SSE_MAX_STREAMS 12: operators hold a quarter (3) by default; each account up to SSE_MAX_STREAMS_PER_OPERATOR
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    await eventually(() => stack.api.deps.hub.openStreams === 0, 'every stream closed');
  });

  it("a viewer opening streams until refused leaves room for registers' streams", async () => {
    const locations = await Promise.all(
      ['One', 'Two', 'Three', 'Four'].map((name) => stack.admin.createLocation(`Share ${name}`)),
    );
    const viewers = await Promise.all(
      ['a', 'b'].map((name) => stack.admin.createOperator({ name: `Viewer ${name}`, role: 'viewer' })),
    );
    expect((await operatorStream(viewers[0]!.token, locations[0]!.id)).status).toBe(200);
    expect((await operatorStream(viewers[0]!.token, locations[1]!.id)).status).toBe(200);
    expect((await operatorStream(viewers[1]!.token, locations[2]!.id)).status).toBe(200);
    const refused = await call('GET', `${stack.origin}/admin/v1/locations/${locations[3]!.id}/stream`, {
      headers: { authorization: `Bearer ${viewers[1]!.token}` },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.json().detail).toBe(
      'This node holds its limit of 3 operator streams; the rest is kept for registers',
    );

    // registers still get theirs, up to the node's limit
    for (let i = 0; i < 4; i++) {
      const { key } = await registerAt(stack, `Share register ${i}`);
      expect((await openStream(key)).status).toBe(200);
    }
    expect(stack.api.deps.hub.openStreams).toBe(7);
  });

  it("an account's newest stream beyond SSE_MAX_STREAMS_PER_OPERATOR ends its oldest, adding none", async () => {
    const location = await stack.admin.createLocation('Share board');
    const viewer = await stack.admin.createOperator({ name: 'Viewer with boards', role: 'viewer' });
    const first = await operatorStream(viewer.token, location.id);
    await operatorStream(viewer.token, location.id);
    const third = await operatorStream(viewer.token, location.id);
    expect(third.status).toBe(200);
    await first.end();
    expect(stack.api.deps.hub.openStreams).toBe(2);
    // the root token is an account too
    for (let i = 0; i < 3; i++)
      expect((await operatorStream(stack.env.ADMIN_TOKEN!, location.id)).status).toBe(i < 1 ? 200 : 429);
  });

  const openStream = async (apiKey: string) => {
    const stream = await TestStream.open(`${stack.origin}${streamPath}`, { apiKey });
    open.push(stream);
    if (stream.status === 200) await stream.preamble();
    return stream;
  };
});
