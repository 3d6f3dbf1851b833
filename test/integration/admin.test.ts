/**
 * The admin surface: paged lists of locations, sessions, live commands and orders by state;
 * reading and changing a location (a new failure threshold holds at once on the running worker,
 * which otherwise keeps the thresholds it read); and the
 * sessions' keys never shown after their creation.
 */
import type { CommandRecord, OperatorOrderRecord, OrderRecord } from '@pos/shared/domain/records';
import type { LocationView } from '@pos/shared/schemas/responses';
import { adminHeader, call, sampleRows } from '../support/http';
import { metricValue } from '../support/metrics';
import { openDb, registerAt } from '../support/fixtures';
import { useStack } from '../support/stack';

describe('admin surface', () => {
  const stack = useStack({ METRICS_PORT: '0' });
  let bearer: { authorization: string };
  const admin = (path: string) => `${stack.origin}/admin/v1${path}`;

  beforeAll(async () => {
    bearer = adminHeader(stack.env);
  });

  /** Every item of a list, page by page, following the Link header; and the page sizes seen. */
  async function walk<T>(first: string): Promise<{ items: T[]; sizes: number[] }> {
    const items: T[] = [];
    const sizes: number[] = [];
    let url: string | undefined = first;
    while (url) {
      const res = await call('GET', url, { headers: bearer });
      expect(res.status).toBe(200);
      const page = res.json<T[]>();
      items.push(...page);
      sizes.push(page.length);
      const next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '');
      url = next ? `${stack.origin}${next[1]}` : undefined;
      expect(sizes.length).toBeLessThan(20);
    }
    return { items, sizes };
  }

  it('lists locations page by page, in creation order, each once', async () => {
    const created: LocationView[] = [];
    for (const name of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo'])
      created.push(await stack.admin.createLocation(name));
    const { items, sizes } = await walk<LocationView>(admin('/locations?limit=2'));
    const ours = items.filter((l) => created.some((c) => c.id === l.id));
    expect(ours).toEqual(created);
    expect(new Set(items.map((l) => l.id)).size).toBe(items.length);
    expect(sizes.slice(0, -1).every((n) => n === 2)).toBe(true);
    expect(sizes.at(-1)!).toBeLessThanOrEqual(2);

    // the same through the typed client: `after` is the last id of the previous page
    const firstTwo = await stack.admin.listLocations({ limit: 2 });
    expect(await stack.admin.listLocations({ limit: 2, after: firstTwo[1]!.id })).toEqual(items.slice(2, 4));
  });

  it('reads and changes a location', async () => {
    const location = await stack.admin.createLocation('Old name', 4);
    expect(await stack.admin.getLocation(location.id)).toEqual(location);
    expect(await stack.admin.updateLocation(location.id, { name: 'New name' })).toEqual({
      ...location,
      name: 'New name',
    });
    expect(await stack.admin.updateLocation(location.id, { failureThreshold: 7 })).toEqual({
      ...location,
      name: 'New name',
      failureThreshold: 7,
    });
    expect(await stack.admin.getLocation(location.id)).toEqual({ ...location, name: 'New name', failureThreshold: 7 });

    const patch = (id: string, body: unknown) => call('PATCH', admin(`/locations/${id}`), { headers: bearer, body });
    expect((await patch('no-such-location', { name: 'x' })).json()).toMatchObject({
      status: 404,
      detail: 'Location does not exist',
    });
    for (const body of [
      {},
      { failureThreshold: 0 },
      { name: '' },
      { name: null },
      { colour: 'red' },
      { name: 'Refused', failureThreshold: 0 },
      { orderDeadline: 'soon' },
    ]) {
      const res = await patch(location.id, body);
      expect(`${JSON.stringify(body)} ${res.status}`).toBe(`${JSON.stringify(body)} 400`);
    }
    expect((await call('PATCH', admin(`/locations/${location.id}`), { body: { name: 'x' } })).status).toBe(401);
    // none of them changed it
    expect(await stack.admin.getLocation(location.id)).toEqual({ ...location, name: 'New name', failureThreshold: 7 });
  });

  it('a changed failure threshold holds from the next failure report, on the running worker', async () => {
    const { location, key } = await registerAt(stack, 'Threshold', 3);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const fail = async () =>
      (await call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, { apiKey: key })).json<OrderRecord>();
    expect((await fail()).state).toBe('PLACED'); // 1 of 3

    await stack.admin.updateLocation(location.id, { failureThreshold: 2 });
    expect((await fail()).state).toBe('FAILED'); // 2 of 2: the worker read the new threshold

    await stack.admin.recoverOrder(location.id, order.number);
    await stack.admin.updateLocation(location.id, { failureThreshold: 10 });
    // the first report after the change reads the threshold; the worker keeps it for the next ones
    const thresholds = async () => {
      const worker = `http://127.0.0.1:${stack.worker!.metricsPort}`;
      const from = async (where: string) => metricValue(worker, 'pos_failure_thresholds_total', { from: where });
      return { cache: await from('cache'), mongodb: await from('mongodb') };
    };
    const before = await thresholds();
    for (let i = 0; i < 3; i++) expect((await fail()).state).toBe('PLACED');
    const after = await thresholds();
    expect({ cache: after.cache - before.cache, mongodb: after.mongodb - before.mongodb }).toEqual({
      cache: 2,
      mongodb: 1,
    });
  });

  it("lists a location's sessions, open and closed, never with a key or its hash", async () => {
    const location = await stack.admin.createLocation('Sessions');
    const register = await stack.admin.createServiceSession(location.id, 'register-1');
    const guest = await stack.admin.createCustomerSession(location.id, 1001, 4);
    const leaving = await stack.admin.createCustomerSession(location.id, 1002);
    await stack.admin.closeSession(leaving.sessionId);

    const res = await call('GET', admin(`/locations/${location.id}/sessions`), { headers: bearer });
    expect(res.status).toBe(200);
    const sessions = res.json();
    expect(sessions).toEqual([
      {
        sessionId: register.sessionId,
        type: 'SERVICE',
        locationId: location.id,
        deviceId: 'register-1',
        createdAt: register.createdAt,
      },
      {
        sessionId: guest.sessionId,
        type: 'CUSTOMER',
        locationId: location.id,
        userNumber: 1001,
        tableNumber: 4,
        createdAt: guest.createdAt,
        expiresAt: guest.expiresAt,
      },
      {
        sessionId: leaving.sessionId,
        type: 'CUSTOMER',
        locationId: location.id,
        userNumber: 1002,
        createdAt: leaving.createdAt,
        expiresAt: leaving.expiresAt,
        closedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    ]);
    for (const key of [register.apiKey, guest.apiKey, leaving.apiKey]) expect(res.text).not.toContain(key.slice(4));
    expect(res.text).not.toMatch(/keyHash|apiKey|[0-9a-f]{64}/);

    expect(await stack.admin.listSessions(location.id, { limit: 1, after: register.sessionId })).toEqual([sessions[1]]);
    expect((await call('GET', admin('/locations/nowhere/sessions'), { headers: bearer })).status).toBe(404);
  });

  it("lists a location's live commands by number, page by page", async () => {
    const { location, key } = await registerAt(stack, 'Commands');
    const commands: CommandRecord[] = [];
    for (const kind of ['READ_TABLE_STATE', 'REQUEST_BILL', 'EXPORT_DATA', 'FETCH_REMOTE_MENU'] as const) {
      commands.push(await stack.admin.createCommand(location.id, kind, 2));
    }
    expect((await call('DELETE', `${stack.baseUrl}/commands/${commands[1]!.number}`, { apiKey: key })).status).toBe(
      200,
    );
    const live = [commands[0], commands[2], commands[3]];
    expect(await stack.admin.listCommands(location.id)).toEqual(live);
    const { items, sizes } = await walk<CommandRecord>(admin(`/locations/${location.id}/commands?limit=2`));
    expect(items).toEqual(live);
    expect(sizes).toEqual([2, 1]);
  });

  it("lists a location's orders in a state, page by page", async () => {
    const location = await stack.admin.createLocation('Orders');
    const orders: OperatorOrderRecord[] = [];
    // the operator's view: each order with its failure count
    for (let i = 0; i < 5; i++)
      orders.push({ ...(await stack.admin.createOrder(location.id, sampleRows, i + 1)), failureCount: 0 });
    const { items, sizes } = await walk<OperatorOrderRecord>(
      admin(`/locations/${location.id}/orders?state=PLACED&limit=2`),
    );
    expect(items).toEqual(orders);
    expect(sizes).toEqual([2, 2, 1]);
    expect(await stack.admin.listOrders(location.id, 'PLACED', { after: orders[3]!.number })).toEqual([orders[4]]);
    expect(await stack.admin.listOrders(location.id, 'COMPLETED')).toEqual([]);

    const list = (query: string) =>
      call('GET', admin(`/locations/${location.id}/orders?${query}`), { headers: bearer });
    expect((await list('limit=2')).json()).toMatchObject({ status: 400, detail: 'state is required.' });
    expect((await list('state=EATEN')).json()).toMatchObject({
      status: 400,
      detail: 'No enum constant OrderState.EATEN',
    });
    for (const query of [
      'state=PLACED&limit=0',
      'state=PLACED&limit=1001',
      'state=PLACED&limit=two',
      'state=PLACED&after=-1',
      'state=PLACED&after=1.5',
      'state=PLACED&limit=1&limit=2',
    ]) {
      const res = await list(query);
      expect(`${query} ${res.status} ${res.json().title}`).toBe(`${query} 400 Validation error`);
    }
  });

  it('a page without `limit` holds at most 100 items', async () => {
    const location = await stack.admin.createLocation('Many');
    const db = await openDb(stack.env);
    try {
      const now = new Date();
      await db.db.collection('orders').insertMany(
        Array.from({ length: 101 }, (_, i) => ({
          _id: `${location.id}:${i + 1}`,
          locationId: location.id,
          number: i + 1,
          state: 'COMPLETED',
          version: 1,
          failureCount: 0,
          appliedJobs: [],
          rows: [{ rowNumber: 1, productId: 'p', name: 'n', quantity: 1, unitPrice: 1 }],
          guestCount: 1,
          createdAt: now,
          updatedAt: now,
        })) as never[],
      );
    } finally {
      await db.close();
    }
    const res = await call('GET', admin(`/locations/${location.id}/orders?state=COMPLETED`), { headers: bearer });
    expect(res.json()).toHaveLength(100);
    expect(res.headers.get('link')).toBe(
      `</admin/v1/locations/${location.id}/orders?state=COMPLETED&after=100>; rel="next"`,
    );
    expect(await stack.admin.listOrders(location.id, 'COMPLETED', { after: 100 })).toHaveLength(1);
  });
});
