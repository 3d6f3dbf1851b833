/**
 * The register's event stream on one in-process node: preamble and headers, replay and
 * reconnection with the cursor, live events, visibility, authentication, session ends, and
 * work that arrives while the replay is read.
 */
import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { OrderRecord } from '@pos/shared/domain/records';
import { expiredSession, registerAt } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { TestStream } from '../support/sse-client';
import { useStack } from '../support/stack';
import { eventually } from '../support/wait';

describe('event stream', () => {
  const stack = useStack();
  const open: TestStream[] = [];

  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });

  const streamUrl = (query = '') => `${stack.baseUrl}/notifications/service/stream${query}`;
  async function connect(apiKey: string, query = '', headers: Record<string, string> = {}): Promise<TestStream> {
    const stream = await TestStream.open(streamUrl(query), { apiKey, headers });
    open.push(stream);
    return stream;
  }
  const setState = (key: string, number: number, newState: string) =>
    call('PUT', `${stack.baseUrl}/orders/${number}/statusupdate`, { apiKey: key, body: { newState } });
  const summary = (stream: TestStream) =>
    stream.events.map((e) => `${e.event} ${e.json().number} ${e.json().state} ${e.id}`);
  const metric = async (name: 'eventsReceived' | 'eventsDelivered', type: string) =>
    (await stack.api.deps.metrics[name].get()).values.find((v) => v.labels.type === type)?.value ?? 0;

  it("opens with text/event-stream headers, the service's request id and `retry:` first", async () => {
    const { key } = await registerAt(stack, 'headers');
    const stream = await connect(key, '', { 'X-Request-Id': 'stream-req-1' });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.headers['cache-control']).toBe('no-store');
    expect(stream.headers['x-accel-buffering']).toBe('no');
    // the service's own id: the caller's is a claim (logged beside it)
    expect(stream.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await stream.waitFor(() => stream.raw.length > 0, 'the preamble');
    expect(stream.raw).toMatch(/^retry: \d+\n\n/);
    expect(stream.events).toEqual([]);
    expect(stack.api.deps.hub.openStreams).toBeGreaterThanOrEqual(1);
  });

  it('`retry:` is a random part of 1000 ms (full jitter): the streams a node ends together do not come back together', async () => {
    const { key } = await registerAt(stack, 'retry-jitter');
    const streams = [];
    // one at a time: a session holds a few streams per node, and a new one ends its oldest
    for (let i = 0; i < 12; i++) {
      const stream = await connect(key);
      await stream.preamble();
      streams.push(stream);
      stream.close();
    }
    const retries = streams.map((s) => s.retries[0]!);
    for (const ms of retries) {
      expect(Number.isInteger(ms)).toBe(true);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(1000);
    }
    expect(new Set(retries).size).toBeGreaterThan(1);
  });

  it('replays PLACED orders and live commands on a first connect, then streams live work and state changes', async () => {
    const { locationId, key } = await registerAt(stack, 'live');
    const o1 = await stack.admin.createOrder(locationId, sampleRows, 4);
    const o2 = await stack.admin.createOrder(locationId, sampleRows);
    expect((await setState(key, o1.number, 'COMPLETED')).status).toBe(200);
    const c1 = await stack.admin.createCommand(locationId, 'REQUEST_BILL', 4);

    const deliveredBefore = await metric('eventsDelivered', 'order');
    const stream = await connect(key);
    const replayed = await stream.eventCount(2);
    expect(replayed.map((e) => [e.event, e.id, e.json()])).toEqual([
      ['order', '2.0', o2],
      ['command', '2.1', c1],
    ]);

    const o3 = await stack.admin.createOrder(locationId, sampleRows, 7);
    await stream.eventCount(3);
    expect(stream.events[2]!.event).toBe('order');
    expect(stream.events[2]!.id).toBe('3.1');
    expect(stream.events[2]!.json()).toEqual(o3);

    const c2 = await stack.admin.createCommand(locationId, 'READ_TABLE_STATE');
    const done = await setState(key, o2.number, 'COMPLETED');
    await stream.eventCount(5);
    expect(stream.events[3]!.json()).toEqual(c2);
    expect(stream.events[3]!.id).toBe('3.2');
    // a state change of an announced order: same cursor, the record as the PUT answered it
    expect(stream.events[4]!.event).toBe('order');
    expect(stream.events[4]!.id).toBe('3.2');
    expect(stream.events[4]!.json()).toEqual(done.json());
    expect(stream.events[4]!.json<OrderRecord>().state).toBe('COMPLETED');
    expect(stream.raw).toContain(`id: 3.1\nevent: order\ndata: ${JSON.stringify(o3)}\n\n`);
    expect(await metric('eventsDelivered', 'order')).toBeGreaterThanOrEqual(deliveredBefore + 3);
    expect(await metric('eventsReceived', 'order')).toBeGreaterThan(0);
  });

  it('announces an order again as PLACED after a failure report below the threshold', async () => {
    const { locationId, key } = await registerAt(stack, 'refail');
    const o1 = await stack.admin.createOrder(locationId, sampleRows);
    const stream = await connect(key);
    await stream.eventCount(1);
    const failed = await call('POST', `${stack.baseUrl}/orders/${o1.number}/failure`, {
      apiKey: key,
      body: { reason: 'printer jam' },
    });
    expect(failed.status).toBe(200);
    await stream.eventCount(2);
    expect(stream.events[1]!.json()).toEqual(failed.json());
    expect(stream.events[1]!.json<OrderRecord>()).toMatchObject({ state: 'PLACED', failedTime: expect.any(String) });
  });

  it('never shows orders a customer is still composing; submitting announces them', async () => {
    const { locationId, key } = await registerAt(stack, 'customer');
    const customer = (await stack.admin.createCustomerSession(locationId, 42, 3)).apiKey;
    const stream = await connect(key);
    await stream.preamble();
    const created = await call('POST', `${stack.baseUrl}/customer/orders`, {
      apiKey: customer,
      body: { rows: sampleRows },
    });
    expect(created.status).toBe(201);
    const number = created.json().number as number;
    expect((await call('POST', `${stack.baseUrl}/customer/orders/${number}/finish`, { apiKey: customer })).status).toBe(
      200,
    );
    const submitted = await call('POST', `${stack.baseUrl}/customer/orders/${number}/submit`, { apiKey: customer });
    expect(submitted.status).toBe(200);
    await stream.eventCount(1);
    // a marker proves nothing else was in between
    const marker = await stack.admin.createCommand(locationId, 'EXPORT_DATA');
    await stream.eventCount(2);
    expect(stream.events.map((e) => e.json())).toEqual([submitted.json(), marker]);
    expect(stream.events[0]!.json<OrderRecord>()).toMatchObject({ state: 'PLACED', userNumber: 42 });
  });

  it('reconnecting with orderNumber/commandNumber replays exactly the missed work', async () => {
    const { locationId, key } = await registerAt(stack, 'reconnect-query');
    const o1 = await stack.admin.createOrder(locationId, sampleRows);
    const first = await connect(key);
    await first.eventCount(1);
    const c1 = await stack.admin.createCommand(locationId, 'READ_TABLE_STATE');
    await first.eventCount(2);
    expect(first.lastEventId).toBe('1.1');
    first.close();

    // missed while away: two orders (one already completed), a command, and a state change
    const o2 = await stack.admin.createOrder(locationId, sampleRows);
    const o3 = await stack.admin.createOrder(locationId, sampleRows);
    expect((await setState(key, o3.number, 'ABORTED')).status).toBe(200);
    const c2 = await stack.admin.createCommand(locationId, 'REQUEST_BILL');
    expect((await setState(key, o1.number, 'COMPLETED')).status).toBe(200);

    const again = await connect(key, '?orderNumber=1&commandNumber=1');
    await again.eventCount(2);
    const marker = await stack.admin.createCommand(locationId, 'EXPORT_DATA');
    await again.eventCount(3);
    expect(again.events.map((e) => [e.event, e.id, e.json()])).toEqual([
      ['order', '2.1', o2],
      ['command', '2.2', c2],
      ['command', '2.3', marker],
    ]);

    // only one half of the cursor: every live command comes again, orders above 2 only
    const half = await connect(key, '?orderNumber=2');
    await half.eventCount(3);
    expect(half.events.map((e) => e.json())).toEqual([c1, c2, marker]);
    expect(half.lastEventId).toBe('2.3');
  });

  it('reconnecting with Last-Event-ID replays exactly the missed work, and wins over the query', async () => {
    const { locationId, key } = await registerAt(stack, 'reconnect-header');
    await stack.admin.createOrder(locationId, sampleRows);
    await stack.admin.createCommand(locationId, 'READ_TABLE_STATE');
    const first = await connect(key);
    await first.eventCount(2);
    const lastId = first.lastEventId;
    expect(lastId).toBe('1.1');
    first.close();

    const o2 = await stack.admin.createOrder(locationId, sampleRows, 9);
    const c2 = await stack.admin.createCommand(locationId, 'FETCH_REMOTE_MENU');
    // a browser EventSource keeps the first URL: the stale query must not replay again
    const again = await connect(key, '?orderNumber=0&commandNumber=0', { 'Last-Event-ID': lastId });
    await again.eventCount(2);
    const marker = await stack.admin.createOrder(locationId, sampleRows);
    await again.eventCount(3);
    expect(again.events.map((e) => [e.event, e.id, e.json()])).toEqual([
      ['order', '2.1', o2],
      ['command', '2.2', c2],
      ['order', '3.2', marker],
    ]);
  });

  it.each([
    ['?orderNumber=-1', {}],
    ['?orderNumber=abc', {}],
    ['?commandNumber=2.5', {}],
    ['?orderNumber=', {}],
    ['', { 'Last-Event-ID': 'seven' }],
    ['', { 'Last-Event-ID': '-1.2' }],
    ['', { 'Last-Event-ID': '4' }],
  ])('answers an invalid cursor (%s %j) with a 400 problem', async (query, headers) => {
    const { key } = await registerAt(stack, `bad-cursor-${Math.random()}`);
    const response = await call('GET', streamUrl(query), { apiKey: key, headers });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({
      type: 'about:blank',
      title: 'Illegal argument',
      status: 400,
      instance: '/api/v1/notifications/service/stream',
    });
  });

  it('answers both 401 shapes after the delay', async () => {
    const { locationId } = await registerAt(stack, 'auth');
    const customer = (await stack.admin.createCustomerSession(locationId, 5)).apiKey;
    const expired = (await expiredSession(stack, locationId, 'old')).apiKey;
    const closed = await stack.admin.createServiceSession(locationId, 'gone');
    await stack.admin.closeSession(closed.sessionId);

    const attempts = await Promise.all([
      call('GET', streamUrl()),
      call('GET', streamUrl(), { apiKey: '' }),
      call('GET', streamUrl(), { apiKey: 'no-such-key' }),
      call('GET', streamUrl(`?api_key=no-such-key`)),
      call('GET', streamUrl(), { apiKey: closed.apiKey }),
      call('GET', streamUrl(), { apiKey: customer }),
      call('GET', streamUrl(), { apiKey: expired }),
    ]);
    for (const response of attempts.slice(0, 5)) {
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(response.text).toBe('{"error":"Session not valid"}');
      expect(response.ms).toBeGreaterThanOrEqual(490);
    }
    for (const response of attempts.slice(5)) {
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.text).toBe('{"message":"Unauthorized","uid":null}');
      expect(response.ms).toBeGreaterThanOrEqual(490);
    }
  });

  it('ends the stream when its session is closed, and the key opens none after', async () => {
    const { locationId, key, sessionId } = await registerAt(stack, 'close');
    const other = (await stack.admin.createServiceSession(locationId, 'close-other')).apiKey;
    const stream = await connect(key);
    const bystander = await connect(other);
    await stream.preamble();
    await stack.admin.closeSession(sessionId);
    await stream.end();
    expect(stream.isEnded).toBe(true);
    const again = await call('GET', streamUrl(), { apiKey: key });
    expect(again.status).toBe(401);
    expect(again.text).toBe('{"error":"Session not valid"}');
    // the other register's stream at the same location stays open
    const order = await stack.admin.createOrder(locationId, sampleRows);
    await bystander.eventCount(1);
    expect(bystander.events[0]!.json()).toEqual(order);
    expect(bystander.isEnded).toBe(false);
  });

  it('ends the stream when its session expires', async () => {
    const location = await stack.admin.createLocation('expiry');
    const session = await stack.admin.createServiceSession(
      location.id,
      'short',
      new Date(Date.now() + 2_000).toISOString(),
    );
    const stream = await connect(session.apiKey);
    expect(stream.status).toBe(200);
    await stream.end(6_000);
    const again = await call('GET', streamUrl(), { apiKey: session.apiKey });
    expect(again.status).toBe(401);
    expect(again.text).toBe('{"message":"Unauthorized","uid":null}');
  });

  it('a session closed while its stream is being opened ends the stream (before and after the subscription)', async () => {
    const { deps } = stack.api;
    // closed after the subscription, during the replay read: the worker's announcement ends it
    const during = await registerAt(stack, 'close-during-replay');
    const originalList = deps.repos.work.listForLocations;
    deps.repos.work.listForLocations = async (ids: string[], ...rest: [Date, number?, number?]) => {
      if (ids.includes(during.locationId)) await stack.admin.closeSession(during.sessionId);
      return originalList.call(deps.repos.work, ids, ...rest);
    };
    try {
      const stream = await connect(during.key);
      expect(stream.status).toBe(200);
      await stream.end();
      expect(stream.raw).toMatch(/^retry: \d+\n\n$/);
    } finally {
      deps.repos.work.listForLocations = originalList;
    }

    // closed before the subscription: the announcement is missed, the session read again is not
    const before = await registerAt(stack, 'close-before-subscribe');
    const originalAdd = deps.hub.add;
    deps.hub.add = async (stream) => {
      if (stream.sessionId === before.sessionId) await stack.admin.closeSession(before.sessionId);
      return originalAdd.call(deps.hub, stream);
    };
    try {
      const stream = await connect(before.key);
      expect(stream.status).toBe(200);
      await stream.end();
      expect(stream.raw).toMatch(/^retry: \d+\n\n$/);
    } finally {
      deps.hub.add = originalAdd;
    }
    await eventually(() => deps.hub.openStreams === 0, 'the streams gone');
  });

  it('a client that vanishes while its stream is being opened leaves nothing behind', async () => {
    const { deps } = stack.api;
    const { locationId } = await registerAt(stack, 'vanish');
    const atAuth = await stack.admin.createServiceSession(locationId, 'vanish-auth');
    const atReplay = await stack.admin.createServiceSession(locationId, 'vanish-replay');
    let current: { stream: TestStream; apiKey: string } | undefined;
    // The node is in this process: its side of each request's connection, by the key it carries.
    const serverSockets = new Map<string, Socket>();
    const onRequest = (message: unknown) => {
      const { request } = message as { request: IncomingMessage };
      const apiKey = request.headers.api_key;
      if (typeof apiKey === 'string') serverSockets.set(apiKey, request.socket);
    };
    diagnostics.subscribe('http.server.request.start', onRequest);
    const vanish = async () => {
      const { stream, apiKey } = current!;
      stream.close();
      await eventually(() => serverSockets.get(apiKey)?.destroyed === true, 'the server to see the connection go');
    };
    const originalFind = deps.repos.sessions.findByKeyHash;
    const originalList = deps.repos.work.listForLocations;
    // gone during authentication (before the stream exists), and gone during the replay read
    deps.repos.sessions.findByKeyHash = async (hash: string) => {
      const session = await originalFind.call(deps.repos.sessions, hash);
      if (session?._id === atAuth.sessionId) await vanish();
      return session;
    };
    const replayReads: Promise<unknown>[] = [];
    deps.repos.work.listForLocations = (ids: string[], ...rest: [Date, number?, number?]) => {
      if (!ids.includes(locationId)) return originalList.call(deps.repos.work, ids, ...rest);
      const read = vanish().then(() => originalList.call(deps.repos.work, ids, ...rest));
      replayReads.push(read);
      return read;
    };
    try {
      for (const session of [atAuth, atReplay]) {
        const { stream, opened } = TestStream.start(streamUrl(), { apiKey: session.apiKey });
        current = { stream, apiKey: session.apiKey };
        await opened.catch(() => undefined);
        await stream.ended;
      }
      // both requests got as far as the replay (the first without noticing its client had gone)
      await eventually(() => replayReads.length === 2, 'both replay reads');
      await Promise.all(replayReads);
      await eventually(() => deps.hub.openStreams === 0, 'no open stream');
    } finally {
      diagnostics.unsubscribe('http.server.request.start', onRequest);
      deps.repos.sessions.findByKeyHash = originalFind;
      deps.repos.work.listForLocations = originalList;
    }
    expect(deps.hub.locationCount).toBe(0);
  });

  it('answers HEAD without holding a stream open', async () => {
    const { key } = await registerAt(stack, 'head');
    const response = await call('HEAD', streamUrl(), { apiKey: key });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stack.api.deps.hub.openStreams).toBe(0);
  });

  describe('work arriving while the replay is read', () => {
    const received = async (type: string) => metric('eventsReceived', type);

    it('orders: what the replay shows is sent once, what came after it is sent too', async () => {
      const { locationId, key } = await registerAt(stack, 'during-replay-orders');
      const a = await stack.admin.createOrder(locationId, sampleRows);
      const b = await stack.admin.createOrder(locationId, sampleRows);
      const { deps } = stack.api;
      const original = deps.repos.work.listForLocations;
      let c: OrderRecord | undefined;
      let d: OrderRecord | undefined;
      let bFailed: OrderRecord | undefined;
      let cDone: OrderRecord | undefined;
      let hooked = false;
      // Runs after the stream subscribed and before/after its replay read: the interleavings are fixed.
      deps.repos.work.listForLocations = async (ids: string[], ...rest: [Date, number?, number?]) => {
        if (!ids.includes(locationId) || hooked) return original.call(deps.repos.work, ids, ...rest);
        hooked = true;
        const before = await received('order');
        c = await stack.admin.createOrder(locationId, sampleRows); // in the replay and buffered
        expect((await setState(key, a.number, 'COMPLETED')).status).toBe(200); // buffered only
        bFailed = (await call('POST', `${stack.baseUrl}/orders/${b.number}/failure`, { apiKey: key, body: {} })).json();
        await eventually(async () => (await received('order')) >= before + 3, 'three order events received');
        const docs = await original.call(deps.repos.work, ids, ...rest);
        d = await stack.admin.createOrder(locationId, sampleRows); // after the read: buffered only
        cDone = (await setState(key, c.number, 'COMPLETED')).json();
        await eventually(async () => (await received('order')) >= before + 5, 'two more order events received');
        return docs;
      };
      let stream: TestStream;
      try {
        stream = await connect(key);
        await stream.eventCount(5);
      } finally {
        deps.repos.work.listForLocations = original;
      }
      const e = await stack.admin.createOrder(locationId, sampleRows);
      await stream.eventCount(6);
      expect(stream.events.map((ev) => ev.json())).toEqual([
        bFailed, // replay, in the state after the failure report
        c, // replay
        { ...a, state: 'COMPLETED', completeTime: expect.any(String) }, // buffered, not in the replay
        d, // buffered after the read
        cDone, // buffered after the read
        e, // live
      ]);
      expect(summary(stream)).toEqual([
        'order 2 PLACED 2.0',
        'order 3 PLACED 3.0',
        'order 1 COMPLETED 3.0',
        'order 4 PLACED 4.0',
        'order 3 COMPLETED 4.0',
        'order 5 PLACED 5.0',
      ]);
    });

    it('commands: one created before the read comes once, one created after it comes too', async () => {
      const { locationId, key } = await registerAt(stack, 'during-replay-commands');
      const c1 = await stack.admin.createCommand(locationId, 'READ_TABLE_STATE');
      const { deps } = stack.api;
      const original = deps.repos.work.listForLocations;
      let c2: unknown;
      let c3: unknown;
      let hooked = false;
      deps.repos.work.listForLocations = async (
        ids: string[],
        now: Date,
        ordersAfter?: number,
        commandsAfter?: number,
      ) => {
        if (!ids.includes(locationId) || hooked)
          return original.call(deps.repos.work, ids, now, ordersAfter, commandsAfter);
        hooked = true;
        const before = await received('command');
        c2 = await stack.admin.createCommand(locationId, 'REQUEST_BILL');
        await eventually(async () => (await received('command')) >= before + 1, 'the command event received');
        const docs = await original.call(deps.repos.work, ids, new Date(), ordersAfter, commandsAfter);
        c3 = await stack.admin.createCommand(locationId, 'EXPORT_DATA');
        await eventually(async () => (await received('command')) >= before + 2, 'the second command event received');
        return docs;
      };
      let stream: TestStream;
      try {
        stream = await connect(key);
        await stream.eventCount(3);
      } finally {
        deps.repos.work.listForLocations = original;
      }
      const c4 = await stack.admin.createCommand(locationId, 'FETCH_REMOTE_MENU');
      await stream.eventCount(4);
      expect(stream.events.map((e) => [e.id, e.json()])).toEqual([
        ['0.1', c1],
        ['0.2', c2],
        ['0.3', c3],
        ['0.4', c4],
      ]);
    });
  });
});
