import { randomUUID } from 'node:crypto';
import { adminHeader, call, sampleRows, statusUpdate } from '../support/http';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { startWorker } from '@pos/worker/worker';
import { openDb, registerAt, useDb } from '../support/fixtures';
import { spawnRole, stackEnv, startStack, useStack } from '../support/stack';
import { eventually } from '../support/wait';

const problemOf = (res: Awaited<ReturnType<typeof call>>) => {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body.type).toBe('about:blank');
  expect(body.status).toBe(res.status);
  return body;
};

describe('problem responses (part 7)', () => {
  const stack = useStack({ BODY_LIMIT: '2048' });
  const db = useDb(stack);
  let key: string;
  let locationId: string;
  let orderNumber: number;

  beforeAll(async () => {
    ({
      key,
      location: { id: locationId },
    } = await registerAt(stack));
    orderNumber = (await stack.admin.createOrder(locationId, sampleRows)).number;
  });

  const put = (path: string, options: Parameters<typeof call>[2] = {}) =>
    call('PUT', `${stack.baseUrl}${path}`, { apiKey: key, ...options });

  afterEach(async () => {
    // No bad request ever changes the record.
    const order = await db.order(locationId, orderNumber);
    expect(order).toMatchObject({ state: 'PLACED', version: 0 });
  });

  it('an unknown state name: 400 Illegal argument, detail beginning "No enum constant"', async () => {
    const res = await put(`/orders/${orderNumber}/statusupdate`, { body: { newState: 'EATEN' } });
    expect(res.status).toBe(400);
    const body = problemOf(res);
    expect(body.title).toBe('Illegal argument');
    expect(body.detail).toMatch(/^No enum constant .*EATEN$/);
    expect(body.instance).toBe(`/api/v1/orders/${orderNumber}/statusupdate`);
  });

  it('state names are case-sensitive like enum constants', async () => {
    const res = await put(`/orders/${orderNumber}/statusupdate`, { body: { newState: 'completed' } });
    expect(problemOf(res).detail).toMatch(/^No enum constant/);
  });

  it('any other string is 400 "No enum constant": however long or odd, echoed cut short and made plain (part 4.2, rule 1)', async () => {
    const admin = adminHeader(stack.env);
    const long = 'X'.repeat(1500); // under BODY_LIMIT, far over any state name
    const cases: [string, string][] = [
      [long, `No enum constant OrderState.${'X'.repeat(32)}...`],
      ['COMPLETED\r\nX-Injected: 1', 'No enum constant OrderState.COMPLETED??X-Injected: 1'],
      ['COMPLETED\u001b[2J\u0000', 'No enum constant OrderState.COMPLETED?[2J?'],
      ['\u202eDETELPMOC', 'No enum constant OrderState.?DETELPMOC'],
      ['\ud800PLACED', 'No enum constant OrderState.?PLACED'],
      ['', 'No enum constant OrderState.'],
      [`\n${'Y'.repeat(40)}`, `No enum constant OrderState.?${'Y'.repeat(31)}...`],
    ];
    for (const [newState, detail] of cases) {
      const answers = [
        await put(`/orders/${orderNumber}/statusupdate`, { body: { newState } }),
        await call('PUT', `${stack.origin}/admin/v1/locations/${locationId}/orders/${orderNumber}/statusupdate`, {
          headers: admin,
          body: { newState },
        }),
      ];
      // the admin list's state filter, a query parameter (an empty one is "required"; a URL
      // carries no lone surrogate, so U+FFFD stands in for it)
      const query = encodeURIComponent(newState.replace(/[\ud800-\udfff]/g, '\ufffd'));
      if (newState !== '')
        answers.push(
          await call('GET', `${stack.origin}/admin/v1/locations/${locationId}/orders?state=${query}`, {
            headers: admin,
          }),
        );
      for (const res of answers) {
        expect(res.status).toBe(400);
        expect(problemOf(res)).toMatchObject({ title: 'Illegal argument', detail });
        // nothing but printable ASCII in the body: no control character, escaped or not
        expect(res.text).toMatch(/^[\x20-\x7e]*$/);
        expect(res.text).not.toMatch(/\\u00|\\[rnt]/);
      }
    }
  });

  it('a newState that is not a string, or missing, stays a validation problem', async () => {
    for (const [body, title, detail] of [
      [{ newState: null }, 'Validation error', 'newState must be string'],
      [{ newState: ['COMPLETED'] }, 'Validation error', 'newState must be string'],
      [{ newState: { name: 'COMPLETED' } }, 'Validation error', 'newState must be string'],
      [{ state: 'COMPLETED' }, 'Illegal argument', 'newState is required.'],
    ] as const) {
      const res = await put(`/orders/${orderNumber}/statusupdate`, { body });
      expect(res.status).toBe(400);
      expect(problemOf(res)).toMatchObject({ title, detail });
    }
  });

  it('text with control characters in a failure reason or an admin field: 400 Validation error', async () => {
    const bad = await call('POST', `${stack.baseUrl}/orders/${orderNumber}/failure`, {
      apiKey: key,
      body: { reason: 'jam\u0007\u0007' },
    });
    expect(problemOf(bad)).toMatchObject({
      status: 400,
      title: 'Validation error',
      detail: 'reason must not contain control characters (but tab and newline) or bidirectional controls',
    });
    const admin = adminHeader(stack.env);
    const location = await call('POST', `${stack.origin}/admin/v1/locations`, {
      headers: admin,
      body: { name: 'Main\u0000Street' },
    });
    expect(problemOf(location)).toMatchObject({
      status: 400,
      title: 'Validation error',
      detail: 'name must be one line without control characters, line separators or bidirectional controls',
    });
    const device = await call('POST', `${stack.origin}/admin/v1/locations/${locationId}/service-sessions`, {
      headers: admin,
      body: { deviceId: 'reg\u202e1' },
    });
    expect(problemOf(device)).toMatchObject({ status: 400, title: 'Validation error' });
  });

  it('an order that does not exist: 400 Illegal argument, "Order does not exist"', async () => {
    const res = await put('/orders/9999/statusupdate', { body: { newState: 'COMPLETED' } });
    expect(res.status).toBe(400);
    expect(problemOf(res)).toMatchObject({ title: 'Illegal argument', detail: 'Order does not exist' });
    const failure = await call('POST', `${stack.baseUrl}/orders/9999/failure`, { apiKey: key });
    expect(problemOf(failure)).toMatchObject({ status: 400, detail: 'Order does not exist' });
  });

  it('a missing required field: 400 Illegal argument "... is required."', async () => {
    const res = await put(`/orders/${orderNumber}/statusupdate`, { body: {} });
    expect(res.status).toBe(400);
    expect(problemOf(res)).toMatchObject({ title: 'Illegal argument', detail: 'newState is required.' });
  });

  it('an empty body: 400', async () => {
    const res = await put(`/orders/${orderNumber}/statusupdate`, {
      body: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    problemOf(res);
  });

  it('malformed JSON: 400 Validation error', async () => {
    const res = await put(`/orders/${orderNumber}/statusupdate`, {
      body: '{"newState": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(problemOf(res)).toMatchObject({ title: 'Validation error', detail: 'Malformed JSON in request body' });
  });

  it('a JSON body that is not an object: 400', async () => {
    const res = await put(`/orders/${orderNumber}/statusupdate`, {
      body: '"COMPLETED"',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    problemOf(res);
  });

  it('a wrong type: 400 Validation error', async () => {
    const res = await put(`/orders/${orderNumber}/statusupdate`, { body: { newState: 5 } });
    expect(res.status).toBe(400);
    expect(problemOf(res)).toMatchObject({ title: 'Validation error', detail: 'newState must be string' });
  });

  it.each(['abc', '0', '-1', '1.5', '99999999999', '1e3'])(
    'a non-numeric or non-positive order number (%s): 400',
    async (n) => {
      const res = await put(`/orders/${n}/statusupdate`, { body: { newState: 'COMPLETED' } });
      expect(res.status).toBe(400);
      expect(problemOf(res)).toMatchObject({
        title: 'Illegal argument',
        detail: 'Order number must be a positive integer',
      });
    },
  );

  it('a body over the limit: 413', async () => {
    const res = await put(`/orders/${orderNumber}/statusupdate`, {
      body: { newState: 'COMPLETED', pad: 'x'.repeat(4096) },
    });
    expect(res.status).toBe(413);
    expect(problemOf(res).title).toBe('Payload too large');
  });

  it('an unknown route: 404 problem, without echoing the query string', async () => {
    const res = await call('GET', `${stack.baseUrl}/nothing/here?api_key=secret`, { apiKey: key });
    expect(res.status).toBe(404);
    expect(problemOf(res)).toMatchObject({ title: 'Not found', instance: '/api/v1/nothing/here' });
    expect(res.text).not.toContain('secret');
  });

  it('a wrong method on a known route: 405 problem', async () => {
    const res = await call('POST', `${stack.baseUrl}/orders/location`, { apiKey: key });
    expect(res.status).toBe(405);
    problemOf(res);
  });

  it('a command that does not exist: 404 "Command does not exist"', async () => {
    const res = await call('DELETE', `${stack.baseUrl}/commands/77`, { apiKey: key });
    expect(res.status).toBe(404);
    expect(problemOf(res)).toMatchObject({ title: 'Not found', detail: 'Command does not exist' });
  });

  it('the admin API: a missing location name is "Location name is required."', async () => {
    const res = await call('POST', `${stack.origin}/admin/v1/locations`, {
      headers: adminHeader(stack.env),
      body: {},
    });
    expect(res.status).toBe(400);
    expect(problemOf(res)).toMatchObject({ title: 'Illegal argument', detail: 'Location name is required.' });
  });

  it('the admin API: a wrong or missing token is a 401 problem', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: stack.env.ADMIN_TOKEN! },
    ];
    for (const headers of attempts) {
      const res = await call('POST', `${stack.origin}/admin/v1/locations`, { headers, body: { name: 'x' } });
      expect(res.status).toBe(401);
      expect(problemOf(res).title).toBe('Unauthorized');
    }
  });

  it('the admin API: bad rows and unknown locations are clear problems', async () => {
    const auth = adminHeader(stack.env);
    const empty = await call('POST', `${stack.origin}/admin/v1/locations/${locationId}/orders`, {
      headers: auth,
      body: { rows: [] },
    });
    expect(problemOf(empty)).toMatchObject({ status: 400, title: 'Validation error' });
    const zero = await call('POST', `${stack.origin}/admin/v1/locations/${locationId}/orders`, {
      headers: auth,
      body: { rows: [{ ...sampleRows[0], quantity: 0 }] },
    });
    expect(problemOf(zero)).toMatchObject({ status: 400, detail: 'rows.0.quantity must be >= 1' });
    const unknown = await call('POST', `${stack.origin}/admin/v1/locations/${randomUUID()}/orders`, {
      headers: auth,
      body: { rows: sampleRows },
    });
    expect(problemOf(unknown)).toMatchObject({ status: 404, detail: 'Location does not exist' });
  });
});

describe('database errors (part 7.2)', () => {
  const stack = useStack();
  const db = useDb(stack);

  /** Records the sequence has not handed out yet: the next inserts collide with them. */
  const taken = (locationId: string, numbers: number[]) =>
    db.db
      .collection('orders')
      .insertMany(
        numbers.map((number) => ({ _id: `${locationId}:${number}` as never, locationId, number, state: 'COMPLETED' })),
      );
  const createOrder = (locationId: string) =>
    call('POST', `${stack.origin}/admin/v1/locations/${locationId}/orders`, {
      headers: adminHeader(stack.env),
      body: { rows: sampleRows },
    });

  it('a number found taken is drawn again: the order gets the next free one', async () => {
    const location = await stack.admin.createLocation('Taken once');
    await taken(location.id, [1]);
    const res = await createOrder(location.id);
    expect(res.status).toBe(201);
    expect(res.json().number).toBe(2);
  });

  it('a database constraint violation is 400 Constraint violation, with an id and no data', async () => {
    const location = await stack.admin.createLocation('Clashing');
    // every number the create draws is taken
    await taken(location.id, [1, 2, 3]);
    const res = await createOrder(location.id);
    expect(res.status).toBe(400);
    const body = problemOf(res);
    expect(body.title).toBe('Constraint violation');
    expect(body.detail).toMatch(/^[0-9a-f-]{36}: A record with the same key already exists$/);
    expect(body.detail).not.toContain(location.id);
  });

  it('another refused database operation is 400 "Something went wrong during database operation."', async () => {
    const location = await stack.admin.createLocation('Broken sequence');
    await db.db
      .collection('locations')
      .updateOne({ _id: location.id as never }, { $set: { orderSeq: 'not a number' } });
    const res = await call('POST', `${stack.origin}/admin/v1/locations/${location.id}/orders`, {
      headers: adminHeader(stack.env),
      body: { rows: sampleRows },
    });
    expect(res.status).toBe(400);
    const body = problemOf(res);
    expect(body.title).toBe('Something went wrong during database operation.');
    expect(body.detail).toMatch(/^[0-9a-f-]{36}: MongoDB refused the operation \(\w+\)$/);
  });
});

describe('unavailability and internal errors', () => {
  it('a queued update nobody processes in time answers 503 with Retry-After', async () => {
    const stack = await startStack({ JOB_TIMEOUT: '300ms' }, { worker: false });
    try {
      const { key, location } = await registerAt(stack);
      const order = await stack.admin.createOrder(location.id, sampleRows);
      const res = await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(problemOf(res).title).toBe('Service unavailable');

      // A worker that comes along later does not apply what the client was told failed.
      const worker = await startWorker(loadConfig(stack.env), createLogger('silent', 'test'));
      try {
        const queue = stack.api.deps.queues;
        const settled = async () => {
          const counts = await queue.jobCounts('waiting', 'active', 'completed');
          return counts.completed === 1 && counts.waiting === 0 && counts.active === 0;
        };
        await eventually(settled, 'the late worker to finish the job');
        expect(await queue.jobCounts('completed')).toEqual({ completed: 1 });
        const list = await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key });
        expect(list.json()).toEqual([order]);
      } finally {
        await worker.close();
      }
    } finally {
      await stack.close();
    }
  });

  it('an unexpected error is a 500 whose UUID is in the detail and in the log line', async () => {
    const env = stackEnv();
    const api = await spawnRole('api', env);
    const db = await openDb(env);
    try {
      const origin = `http://127.0.0.1:${api.port}`;
      const admin = new AdminClient(origin, env.ADMIN_TOKEN!);
      const location = await admin.createLocation('Corrupt');
      const session = await admin.createServiceSession(location.id, 'r');
      // A record the service cannot have written: rows is not an array.
      await db.db.collection('orders').insertOne({
        _id: `${location.id}:1` as never,
        locationId: location.id,
        number: 1,
        state: 'PLACED',
        rows: 'garbage',
      });
      const res = await call('GET', `${origin}/api/v1/orders/location`, { apiKey: session.apiKey });
      expect(res.status).toBe(500);
      const body = problemOf(res);
      expect(body.title).toBe('Internal server error');
      const [, uuid] = /^([0-9a-f-]{36}): /.exec(body.detail) ?? [];
      expect(uuid).toBeDefined();
      const line = () =>
        api
          .output()
          .split('\n')
          .find((l) => l.includes(uuid!) && l.includes('unexpected error'));
      await eventually(() => line() !== undefined, 'the error logged with its UUID');
      expect(JSON.parse(line()!).requestId).toBe(res.headers.get('x-request-id'));
    } finally {
      await db.close();
      await api.stop();
    }
  });
});
