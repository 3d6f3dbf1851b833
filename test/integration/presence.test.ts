/**
 * Register presence and pausing a location (docs/presence-and-deadlines.md), over real HTTP on
 * two API nodes and two workers sharing one Redis and one MongoDB, with a 2 s PRESENCE_WINDOW;
 * and a sweep killed between a change and its announcement, whose next sweep announces it.
 */
import type { LocationChangeView } from '@pos/shared/schemas/responses';
import type { LocationDoc } from '@pos/shared/store/documents';
import { customerAt, listenToLocation } from '../support/customer';
import { Deployment, operatorStream, startDeployment } from '../support/deployment';
import { openDb, registerAt } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { metricValue } from '../support/metrics';
import { TestStream, streamPath } from '../support/sse-client';
import { ChildRole, spawnRole, Stack, startStack } from '../support/stack';
import { eventually, pause } from '../support/wait';

const WINDOW_MS = 2_000;

const locationEvents = (stream: TestStream) =>
  stream.events.filter((e) => e.event === 'location').map((e) => e.json<LocationChangeView>());
const changes = (stream: TestStream) => locationEvents(stream).map((e) => e.change);

describe('register presence across API nodes', () => {
  let d: Deployment;
  const open: TestStream[] = [];

  beforeAll(async () => {
    d = await startDeployment({ PRESENCE_WINDOW: `${WINDOW_MS}ms` });
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(async () => {
    await d?.close();
  });

  it('a poll on node B puts the location online, read through node A; silence for the window takes it offline, each change announced once', async () => {
    const { locationId, sessionId, key } = await registerAt(d.a, 'poller');
    const watch = await operatorStream(d.a.origin, d.env, locationId);
    open.push(watch);
    const before = await d.a.admin.getPresence(locationId);
    expect(before).toMatchObject({ online: false, registers: [] });
    expect((await d.a.admin.getLocation(locationId)).online).toBe(false);

    const polledAt = Date.now();
    expect((await call('GET', `${d.b.baseUrl}/orders/location?state=PLACED`, { apiKey: key })).status).toBe(200);
    const presence = await d.a.admin.getPresence(locationId);
    expect(presence.online).toBe(true);
    expect(presence.registers).toEqual([
      { sessionId, deviceId: 'register-poller', lastSeenAt: expect.any(String), streams: 0 },
    ]);
    expect(Date.parse(presence.registers[0]!.lastSeenAt)).toBeGreaterThanOrEqual(polledAt - 5);

    // the worker's sweep announces it, once, and the location and its list show it
    await eventually(() => changes(watch).includes('online'), 'the online event');
    const online = await d.a.admin.getLocation(locationId);
    expect(online).toMatchObject({ online: true, paused: false });
    expect(locationEvents(watch)[0]!.location).toEqual(online);
    expect((await d.b.admin.listLocations({ online: true })).map((l) => l.id)).toContain(locationId);
    expect((await d.b.admin.listLocations({ online: false })).map((l) => l.id)).not.toContain(locationId);

    // no request for a window: offline
    await eventually(() => changes(watch).includes('offline'), 'the offline event', 4 * WINDOW_MS + 5_000);
    expect(Date.now() - polledAt).toBeGreaterThanOrEqual(WINDOW_MS);
    const offline = await d.b.admin.getLocation(locationId);
    expect(offline.online).toBe(false);
    expect(Date.parse(offline.since)).toBeGreaterThan(Date.parse(online.since));
    expect((await d.a.admin.getPresence(locationId)).registers).toEqual([]);
    expect((await d.b.admin.listLocations({ online: false })).map((l) => l.id)).toContain(locationId);
    // two workers swept all along: each change once
    expect(changes(watch)).toEqual(['online', 'offline']);
  });

  it('a stream held on node B keeps the location online past the window; its end lets it go offline', async () => {
    const { locationId, sessionId, key } = await registerAt(d.a, 'streamer');
    const watch = await operatorStream(d.a.origin, d.env, locationId);
    open.push(watch);
    const register = await TestStream.open(`${d.b.origin}${streamPath}`, { apiKey: key });
    expect(register.status).toBe(200);
    await register.preamble();
    const openedAt = Date.now();

    await eventually(
      async () => (await d.a.admin.getPresence(locationId)).registers[0]?.streams === 1,
      'the stream counted through node A',
    );
    await eventually(() => changes(watch).includes('online'), 'the online event');
    // Held past the window (its node's heartbeat every quarter window): still online, still one stream.
    await eventually(
      async () => {
        const p = await d.a.admin.getPresence(locationId);
        return (
          p.online && p.registers[0]!.streams === 1 && Date.parse(p.registers[0]!.lastSeenAt) > openedAt + WINDOW_MS
        );
      },
      'the held stream seen after a window',
      4 * WINDOW_MS + 5_000,
    );
    expect(changes(watch)).toEqual(['online']);
    expect((await d.a.admin.getPresence(locationId)).registers).toEqual([
      { sessionId, deviceId: 'register-streamer', lastSeenAt: expect.any(String), streams: 1 },
    ]);

    register.close();
    await eventually(
      async () => (await d.a.admin.getPresence(locationId)).registers[0]?.streams === 0,
      'the closed stream uncounted',
    );
    await eventually(() => changes(watch).includes('offline'), 'the offline event', 4 * WINDOW_MS + 5_000);
    expect(changes(watch)).toEqual(['online', 'offline']);
    // the register's own stream never carried a location event
    expect(register.events.filter((e) => e.event === 'location')).toEqual([]);
  });

  it('gauges on /metrics count the locations online and paused', async () => {
    const { locationId, key } = await registerAt(d.a, 'gauged');
    const online = await metricValue(d.a.origin, 'pos_locations_online');
    const paused = await metricValue(d.a.origin, 'pos_locations_paused');
    await call('GET', `${d.b.baseUrl}/orders/location?state=PLACED`, { apiKey: key });
    await d.b.admin.pauseLocation(locationId, { reason: 'gauge' });
    await eventually(
      async () => (await metricValue(d.a.origin, 'pos_locations_online')) === online + 1,
      'one more online',
    );
    expect(await metricValue(d.b.origin, 'pos_locations_paused')).toBe(paused + 1);
    await d.a.admin.resumeLocation(locationId);
    expect(await metricValue(d.b.origin, 'pos_locations_paused')).toBe(paused);
  });
});

describe('pausing a location', () => {
  let d: Deployment;

  beforeAll(async () => {
    d = await startDeployment({ PRESENCE_WINDOW: `${WINDOW_MS}ms` });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('refuses customers while paused, takes counter orders, and ends by itself at `until`', async () => {
    const { locationId } = await registerAt(d.a, 'paused-until');
    const customer = await customerAt(d.b, locationId, 1);
    // a cart made before the pause: its submit is refused too
    const cart = await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } });
    expect(cart.status).toBe(201);
    const number = cart.json<{ number: number }>().number;
    expect((await call('POST', `${customer.url}/orders/${number}/finish`, { apiKey: customer.key })).status).toBe(200);
    const watch = await operatorStream(d.a.origin, d.env, locationId);

    const until = new Date(Date.now() + 2_500).toISOString();
    const paused = await d.a.admin.pauseLocation(locationId, { until, reason: 'kitchen closed' });
    expect(paused).toMatchObject({ id: locationId, paused: true, pausedUntil: until, pauseReason: 'kitchen closed' });
    expect(await d.b.admin.getLocation(locationId)).toEqual(paused);
    await eventually(() => changes(watch).includes('paused'), 'the paused event');

    const refused = await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } });
    expect(refused.status).toBe(409);
    expect(refused.json()).toMatchObject({
      title: 'Location not accepting orders',
      detail: `Location is paused until ${until} (kitchen closed)`,
    });
    const submit = await call('POST', `${customer.url}/orders/${number}/submit`, { apiKey: customer.key });
    expect(submit.status).toBe(409);
    expect(submit.json().title).toBe('Location not accepting orders');
    // the kitchen finishes what it has: counter orders go through
    const counter = await d.b.admin.createOrder(locationId, sampleRows, 3);
    expect(counter.state).toBe('PLACED');

    // at `until` customers are taken again, and the sweep announces the end
    await eventually(
      async () =>
        (await call('POST', `${customer.url}/orders/${number}/submit`, { apiKey: customer.key })).status === 200,
      'the submit taken after until',
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(until));
    await eventually(() => changes(watch).includes('resumed'), 'the resumed event');
    const resumed = await d.a.admin.getLocation(locationId);
    expect(resumed.paused).toBe(false);
    expect(resumed).not.toHaveProperty('pausedUntil');
    expect(changes(watch)).toEqual(['paused', 'resumed']);
    watch.close();
  });

  it('a pause without `until` holds until an operator resumes it', async () => {
    const { locationId } = await registerAt(d.a, 'paused-open');
    const customer = await customerAt(d.b, locationId, 2);
    const paused = await d.b.admin.pauseLocation(locationId);
    expect(paused.paused).toBe(true);
    expect(paused).not.toHaveProperty('pausedUntil');
    const refused = await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } });
    expect(refused.status).toBe(409);
    expect(refused.json().detail).toBe('Location is paused until an operator resumes it');
    expect((await d.a.admin.resumeLocation(locationId)).paused).toBe(false);
    expect(
      (await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } })).status,
    ).toBe(201);
  });

  it('refuses an `until` in the past', async () => {
    const { locationId } = await registerAt(d.a, 'paused-past');
    const res = await call('PUT', `${d.a.origin}/admin/v1/locations/${locationId}/pause`, {
      headers: { authorization: `Bearer ${d.env.ADMIN_TOKEN}` },
      body: { until: new Date(Date.now() - 1000).toISOString() },
    });
    expect(res.status).toBe(400);
    expect(res.json().detail).toBe('until must be in the future');
  });
});

describe('PAUSE_WHEN_OFFLINE=1', () => {
  let d: Deployment;

  beforeAll(async () => {
    d = await startDeployment({ PRESENCE_WINDOW: `${WINDOW_MS}ms`, PAUSE_WHEN_OFFLINE: '1' });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('refuses customers while no register is online, and takes them once one polls', async () => {
    const { locationId, key } = await registerAt(d.a, 'dark');
    const customer = await customerAt(d.b, locationId, 1);
    const refused = await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } });
    expect(refused.status).toBe(409);
    expect(refused.json()).toMatchObject({
      title: 'Location not accepting orders',
      detail: expect.stringContaining('offline'),
    });
    // counter orders are the kitchen's own: taken
    expect((await d.a.admin.createOrder(locationId, sampleRows)).state).toBe('PLACED');

    expect((await call('GET', `${d.a.baseUrl}/orders/location?state=PLACED`, { apiKey: key })).status).toBe(200);
    await eventually(
      async () =>
        (await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } })).status ===
        201,
      'a customer taken once online',
    );
  });
});

describe('PAUSE_AFTER_FAILED_ORDERS=2', () => {
  let d: Deployment;

  beforeAll(async () => {
    d = await startDeployment({ PAUSE_AFTER_FAILED_ORDERS: '2' });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('pauses a location whose orders fail twice in a row (a COMPLETED one resets the count), until an operator resumes it', async () => {
    const { locationId, key } = await registerAt(d.a, 'failing', 1);
    const watch = await operatorStream(d.a.origin, d.env, locationId);
    const fail = async (number: number) =>
      expect(
        (
          await call('POST', `${d.b.baseUrl}/orders/${number}/failure`, { apiKey: key, body: { reason: 'printer' } })
        ).json().state,
      ).toBe('FAILED');
    const [first, second, third] = [
      await d.a.admin.createOrder(locationId, sampleRows),
      await d.a.admin.createOrder(locationId, sampleRows),
      await d.a.admin.createOrder(locationId, sampleRows),
    ];
    await fail(first.number);
    expect(
      (
        await call('PUT', `${d.a.baseUrl}/orders/${second.number}/statusupdate`, {
          apiKey: key,
          body: { newState: 'COMPLETED' },
        })
      ).status,
    ).toBe(200);
    await fail(third.number);
    // one failure since the COMPLETED: not paused
    expect((await d.b.admin.getLocation(locationId)).paused).toBe(false);

    const fourth = await d.a.admin.createOrder(locationId, sampleRows);
    await fail(fourth.number);
    await eventually(() => changes(watch).includes('paused'), 'the paused event');
    const paused = await d.b.admin.getLocation(locationId);
    expect(paused).toMatchObject({ paused: true, pauseReason: 'failed orders' });
    expect(paused).not.toHaveProperty('pausedUntil');
    expect(locationEvents(watch).find((e) => e.change === 'paused')!.location).toEqual(paused);
    const customer = await customerAt(d.b, locationId, 1);
    const refused = await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } });
    expect(refused.json()).toMatchObject({
      status: 409,
      detail: 'Location is paused until an operator resumes it (failed orders)',
    });

    expect((await d.a.admin.resumeLocation(locationId)).paused).toBe(false);
    expect(
      (await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } })).status,
    ).toBe(201);
    watch.close();
  });
});

describe('a sweep that dies between its change and its announcement', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof openDb>>;

  beforeAll(async () => {
    // The API alone here: the workers are children, one to die and one to take over.
    stack = await startStack({ PRESENCE_WINDOW: `${WINDOW_MS}ms`, JOB_LOCK_DURATION: '1s' }, { worker: false });
    db = await openDb(stack.env);
  });
  afterAll(async () => {
    await db?.close();
    await stack?.close();
  });

  it('leaves the change recorded, and the next sweep announces it once', async () => {
    const { locationId, key } = await registerAt(stack, 'sweep-crash');
    const listener = await listenToLocation(stack.env.REDIS_PREFIX!, locationId);
    const announced = () => listener.events.flatMap((e) => (e.type === 'location' ? [e.change] : []));
    const location = () => db.db.collection<LocationDoc>('locations').findOne({ _id: locationId });
    // The register keeps polling: the location stays online throughout.
    const poll = () => call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key });
    expect((await poll()).status).toBe(200);
    const polling = setInterval(() => void poll(), 250);
    let rescuer: ChildRole | undefined;
    try {
      const doomed = await spawnRole(
        'worker',
        { ...stack.env, FAULT_INJECT: 'crash-after-location-change' },
        { mayDieFirst: true },
      );
      expect({ code: await doomed.exited, signal: doomed.process.signalCode }).toEqual({
        code: null,
        signal: 'SIGKILL',
      });
      expect(await location()).toMatchObject({ online: true, unannounced: ['online'] });
      expect(announced()).toEqual([]);

      rescuer = await spawnRole('worker', stack.env);
      await listener.until(() => announced().length > 0);
      await eventually(async () => (await location())?.unannounced === undefined, 'the change cleared');
      // The sweeps of a window more (four) have nothing more to announce: the time is what is tested.
      await pause(WINDOW_MS);
      expect(announced()).toEqual(['online']);
      expect(listener.events[0]).toMatchObject({
        type: 'location',
        change: 'online',
        location: { id: locationId, online: true },
      });
    } finally {
      clearInterval(polling);
      await listener.close();
      if (rescuer) expect(await rescuer.stop()).toBe(0);
    }
  });
});
