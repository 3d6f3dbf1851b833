/**
 * Overload (docs/overload.md), with the real roles over real HTTP: a job that reaches a worker past
 * its request's deadline is not applied (and its key's retry applies it); a partition's admission
 * refuses the least critical writes first, at once and with Retry-After; the node's bound on
 * requests in flight refuses admin lists first and never a poll; and every refusal is counted. A
 * queue whose oldest job has waited less than QUEUE_WAIT_TARGET admits beyond the limit (it moves).
 * A session close is admitted by the partition its job goes to, its session's.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { partitionOf } from '@pos/shared/queue/partitions';
import { startWorker } from '@pos/worker/worker';
import { Customer, customerAt } from '../support/customer';
import { openDb, registerAt } from '../support/fixtures';
import { adminHeader, call, HttpResult, sampleRows, statusUpdate } from '../support/http';
import { metricValue } from '../support/metrics';
import { startStack, useStack } from '../support/stack';
import { eventually, pause } from '../support/wait';

type Stack = Awaited<ReturnType<typeof startStack>>;

const overloaded = (res: HttpResult) =>
  res.status === 503 && /The service is overloaded/.test(res.json().detail as string);

describe('a job past its deadline', () => {
  let stack: Stack;
  beforeAll(async () => {
    // no worker yet: the jobs wait past their requests' deadlines
    stack = await startStack({ JOB_TIMEOUT: '1s' }, { worker: false });
  });
  afterAll(() => stack?.close());

  it("is not applied (the 503 says so), counts as expired, and its key's retry applies it once", async () => {
    const { key, location } = await registerAt(stack, 'Late jobs');
    const keyedOrder = await stack.admin.createOrder(location.id, sampleRows);
    const unkeyedOrder = await stack.admin.createOrder(location.id, sampleRows);
    const idempotencyKey = randomUUID();
    const complete = (number: number, headers: Record<string, string> = {}) =>
      call('PUT', `${stack.baseUrl}/orders/${number}/statusupdate`, {
        apiKey: key,
        headers,
        body: { newState: 'COMPLETED' },
      });

    const [keyed, unkeyed] = await Promise.all([
      complete(keyedOrder.number, { 'Idempotency-Key': idempotencyKey }),
      complete(unkeyedOrder.number),
    ]);
    // still waiting when its request gave up: no worker will start it now
    expect(keyed.status).toBe(503);
    expect(keyed.json().detail).toBe(
      'The request waited too long for a worker and was not applied: retry it with the same Idempotency-Key',
    );
    expect(unkeyed.status).toBe(503);
    expect(unkeyed.json().detail).toBe('The request waited too long for a worker and was not applied: retry it');

    // a worker comes: it takes both jobs, and applies neither
    const worker = await startWorker(loadConfig({ ...stack.env, METRICS_PORT: '0' }), createLogger('silent', 'test'));
    try {
      const expired = () =>
        metricValue(`http://127.0.0.1:${worker.metricsPort}`, 'pos_jobs_processed_total', {
          job: 'order-action',
          status: 'expired',
        });
      await eventually(async () => (await expired()) === 2, 'both jobs taken and refused as expired');
      const db = await openDb(stack.env);
      try {
        expect(await db.order(location.id, keyedOrder.number)).toMatchObject({ state: 'PLACED', version: 0 });
        expect(await db.order(location.id, unkeyedOrder.number)).toMatchObject({ state: 'PLACED', version: 0 });
        // the keyed retry runs the work afresh, once
        const retried = await complete(keyedOrder.number, { 'Idempotency-Key': idempotencyKey });
        expect(retried.status).toBe(200);
        expect(retried.json()).toMatchObject({ number: keyedOrder.number, state: 'COMPLETED' });
        expect(await db.order(location.id, keyedOrder.number)).toMatchObject({ state: 'COMPLETED', version: 1 });
        const again = await complete(keyedOrder.number, { 'Idempotency-Key': idempotencyKey });
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(await db.order(location.id, keyedOrder.number)).toMatchObject({ version: 1 });
      } finally {
        await db.close();
      }
      expect(await expired()).toBe(2);
    } finally {
      await worker.close();
    }
  });
});

describe("a partition's admission, with no worker to finish anything", () => {
  let stack: Stack;
  beforeAll(async () => {
    // Once the oldest job has waited QUEUE_WAIT_TARGET, the floor alone admits: 10 in flight for a
    // register's writes, 7 (its 70 %) for the others'.
    stack = await startStack(
      { QUEUE_ADMISSION_FLOOR: '10', QUEUE_WAIT_TARGET: '200ms', JOB_TIMEOUT: '3s' },
      { worker: false },
    );
  });
  afterAll(() => stack?.close());

  it("refuses operators' writes before registers' status updates, at once and with Retry-After, and counts each refusal", async () => {
    const { key, location } = await registerAt(stack, 'Admission');
    const orders = [];
    for (let i = 0; i < 20; i++) orders.push(await stack.admin.createOrder(location.id, sampleRows));
    const auth = adminHeader(stack.env);
    const operatorUpdate = (number: number) =>
      call('PUT', `${stack.origin}/admin/v1/locations/${location.id}/orders/${number}/statusupdate`, {
        headers: auth,
        body: { newState: 'COMPLETED' },
      });
    const registerUpdate = (number: number) => statusUpdate(stack.baseUrl, key, number, 'COMPLETED');
    const shedBefore = await metricValue(stack.origin, 'pos_requests_shed_total', {
      reason: 'queue',
      route: '/admin/v1/locations/:id/orders/:number/statusupdate',
    });

    // seven operators' updates are admitted (and wait); once the queue is
    // seen not to move, three more are refused at once
    const admitted = orders.slice(0, 7).map((order) => operatorUpdate(order.number));
    await eventually(() => stack.api.deps.admission.signals()[0]!.inFlight === 7, 'seven operator updates in flight');
    // the oldest job's wait past QUEUE_WAIT_TARGET is what is tested
    await pause(300);
    const operatorAnswers = [...admitted, ...orders.slice(7, 10).map((order) => operatorUpdate(order.number))];
    // registers' updates still get in, up to the whole limit
    const registerAnswers = await Promise.all(
      orders.slice(10, 15).map((order) => registerUpdate(order.number).then((res) => ({ res }))),
    );
    const operators = await Promise.all(operatorAnswers);

    const shedOperators = operators.filter(overloaded);
    expect(shedOperators).toHaveLength(3);
    for (const res of shedOperators) {
      expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(res.json().detail).toMatch(/the request was not queued and nothing of it was done/);
      expect(res.ms).toBeLessThan(500);
    }
    // the admitted ones waited for a worker that never came
    expect(
      operators.filter((res) => res.status === 503 && /not applied/.test(res.json().detail as string)),
    ).toHaveLength(7);
    const shedRegisters = registerAnswers.filter(({ res }) => overloaded(res));
    expect(shedRegisters).toHaveLength(2);
    expect(registerAnswers.filter(({ res }) => /not applied/.test(res.json().detail as string))).toHaveLength(3);
    expect(
      await metricValue(stack.origin, 'pos_requests_shed_total', {
        reason: 'queue',
        route: '/admin/v1/locations/:id/orders/:number/statusupdate',
      }),
    ).toBe(shedBefore + 3);
    expect(
      await metricValue(stack.origin, 'pos_requests_shed_total', {
        reason: 'queue',
        route: '/api/v1/orders/:number/statusupdate',
      }),
    ).toBe(2);
    expect(await metricValue(stack.origin, 'pos_admission_limit', { partition: '0' })).toBe(10);
    // and a shed write was not queued: its order is as it was
    const db = await openDb(stack.env);
    try {
      expect(await db.db.collection('orders').countDocuments({ locationId: location.id, version: { $gt: 0 } })).toBe(0);
    } finally {
      await db.close();
    }
  });
});

interface RawAnswer {
  status: number;
  /** As sent: names in their case and order. */
  headers: [string, string][];
  body: string;
}

/** A status update over a plain socket: the answer's bytes as sent, for a byte-for-byte comparison. */
function rawPut(url: string, headers: Record<string, string>): Promise<RawAnswer> {
  const body = JSON.stringify({ newState: 'COMPLETED' });
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'PUT',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const pairs: [string, string][] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
          resolve({ status: res.statusCode!, headers: pairs, body: text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('a refusal in front of the app', () => {
  const stack = useStack(
    { QUEUE_ADMISSION_FLOOR: '2', QUEUE_WAIT_TARGET: '200ms', JOB_TIMEOUT: '3s' },
    { worker: false },
  );

  it("answers a held session's queued write as the app's admission does, and leaves what it cannot decide to the app", async () => {
    const { key, location } = await registerAt(stack, 'Refused in front');
    const orders = [];
    for (let i = 0; i < 3; i++) orders.push(await stack.admin.createOrder(location.id, sampleRows));
    const path = (number: number) => `${stack.baseUrl}/orders/${number}/statusupdate`;
    const update = (number: number) => call('PUT', path(number), { apiKey: key, body: { newState: 'COMPLETED' } });
    const route = { reason: 'queue', route: '/api/v1/orders/:number/statusupdate' };
    // the register's session held by the node (a poll read it), and its partition
    // full once its two jobs have waited QUEUE_WAIT_TARGET
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).status).toBe(200);
    const partition = stack.api.deps.queues.partitionOfKey(location.id);
    const admitted = [update(orders[0]!.number), update(orders[1]!.number)];
    await eventually(() => stack.api.deps.admission.signals()[partition]!.inFlight === 2, 'two updates in flight');
    await pause(300);

    const warn = jest.spyOn(stack.api.deps.log, 'warn');
    try {
      // the key in the query string: the app's own admission answers (the
      // first refusal of an overload is always the app's)
      const inApp = await rawPut(`${path(orders[2]!.number)}?api_key=${key}`, {});
      expect(warn).not.toHaveBeenCalled();
      const inFront = await rawPut(path(orders[2]!.number), { api_key: key });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn).toHaveBeenCalledWith({ refused: 1 }, expect.stringMatching(/refused in front of the app/));

      // byte for byte alike: status, headers in their order, body; but the request id (and the date)
      for (const res of [inFront, inApp])
        expect([res.status, JSON.parse(res.body).detail]).toEqual([
          503,
          expect.stringMatching(/^The service is overloaded/),
        ]);
      const sameBytes = (res: RawAnswer) => ({
        status: res.status,
        headers: res.headers.filter(([name]) => !['date', 'x-request-id'].includes(name.toLowerCase())),
        body: res.body,
      });
      expect(sameBytes(inFront)).toEqual(sameBytes(inApp));
      for (const res of [inFront, inApp])
        expect(res.headers.find(([name]) => name.toLowerCase() === 'x-request-id')?.[1]).toMatch(/^[0-9a-f-]{36}$/);
      expect(await metricValue(stack.origin, 'pos_requests_shed_total', route)).toBe(2);
      expect(
        await metricValue(stack.origin, 'pos_http_requests_total', {
          method: 'PUT',
          route: route.route,
          status: '503',
        }),
      ).toBe(2);
    } finally {
      warn.mockRestore();
    }
    // nothing of either was queued: the order is as it was
    await Promise.all(admitted);
    const db = await openDb(stack.env);
    try {
      expect(await db.order(location.id, orders[2]!.number)).toMatchObject({ state: 'PLACED', version: 0 });
    } finally {
      await db.close();
    }
  });
});

describe("the node's bound on requests in flight", () => {
  let stack: Stack;
  beforeAll(async () => {
    // 10 in flight: admin lists refused from 4, operators' and customers' work from 7, registers' writes at 10
    stack = await startStack(
      { HTTP_MAX_IN_FLIGHT: '10', QUEUE_ADMISSION_FLOOR: '100', JOB_TIMEOUT: '3s' },
      { worker: false },
    );
  });
  afterAll(() => stack?.close());

  it("refuses admin lists first, then operators' reads and writes, then registers' writes; never a poll or a probe", async () => {
    const { key, location } = await registerAt(stack, 'In flight');
    const orders = [];
    for (let i = 0; i < 9; i++) orders.push(await stack.admin.createOrder(location.id, sampleRows));
    const auth = adminHeader(stack.env);
    const registerUpdate = (number: number) => statusUpdate(stack.baseUrl, key, number, 'COMPLETED');
    const list = () => call('GET', `${stack.origin}/admin/v1/locations`, { headers: auth });
    const read = () => call('GET', `${stack.origin}/admin/v1/locations/${location.id}`, { headers: auth });

    // four writes held in flight (each waits for a worker)
    const held = orders.slice(0, 4).map((order) => registerUpdate(order.number));
    await eventually(() => stack.api.deps.inFlight.current === 4, 'four requests in flight');
    const refusedList = await list();
    expect(overloaded(refusedList)).toBe(true);
    expect(refusedList.json().detail).toMatch(/the request was not processed/);
    expect((await read()).status).toBe(200);

    // seven: an operator's read is refused too, a register's write is not
    const more = orders.slice(4, 7).map((order) => registerUpdate(order.number));
    await eventually(() => stack.api.deps.inFlight.current === 7, 'seven requests in flight');
    expect(overloaded(await read())).toBe(true);
    const poll = await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key });
    expect(poll.status).toBe(200);
    expect((await call('GET', `${stack.origin}/healthz`)).status).toBe(200);
    expect((await call('GET', `${stack.origin}/readyz`)).status).toBe(200);
    const last = orders.slice(7, 9).map((order) => registerUpdate(order.number));
    await eventually(() => stack.api.deps.inFlight.current === 9, 'nine requests in flight');

    await Promise.all([...held, ...more, ...last]);
    expect(
      await metricValue(stack.origin, 'pos_requests_shed_total', { reason: 'in-flight', route: '/admin/v1/locations' }),
    ).toBe(1);
    expect(
      await metricValue(stack.origin, 'pos_requests_shed_total', {
        reason: 'in-flight',
        route: '/admin/v1/locations/:id',
      }),
    ).toBe(1);
  });
});

describe("a session close's admission", () => {
  let stack: Stack;
  beforeAll(async () => {
    // Two partitions, a floor of 2: two register writes fill a location's partition for every criticality.
    stack = await startStack(
      { QUEUE_PARTITIONS: '2', QUEUE_ADMISSION_FLOOR: '2', QUEUE_WAIT_TARGET: '200ms', JOB_TIMEOUT: '2s' },
      { worker: false },
    );
  });
  afterAll(() => stack?.close());

  it("is its session's partition's, where its job goes: a busy location refuses the closes routed to it, not the others", async () => {
    const { key, location } = await registerAt(stack, 'Closing under load');
    const busy = partitionOf(location.id, 2);
    // one customer whose session's partition is the location's, one whose is the other
    const customers = new Map<number, Customer>();
    for (let user = 1; customers.size < 2; user++) {
      const customer = await customerAt(stack, location.id, user);
      const partition = partitionOf(customer.sessionId, 2);
      if (!customers.has(partition)) customers.set(partition, customer);
    }
    const orders = await Promise.all([1, 2].map(() => stack.admin.createOrder(location.id, sampleRows)));
    const held = orders.map((order) => statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED'));
    await eventually(() => stack.api.deps.admission.signals()[busy]!.inFlight === 2, "the location's partition full");
    // the oldest job's wait past QUEUE_WAIT_TARGET: the partition is seen not to move
    await pause(300);

    const close = (customer: Customer) => call('DELETE', `${customer.url}/session`, { apiKey: customer.key });
    const [onBusy, onOther] = await Promise.all([close(customers.get(busy)!), close(customers.get(1 - busy)!)]);
    expect(overloaded(onBusy)).toBe(true);
    expect(onBusy.json().detail).toMatch(/the request was not queued/);
    // admitted to its own partition, it waited for a worker that never came
    expect(onOther.status).toBe(503);
    expect(onOther.json().detail).toMatch(/^The request waited too long for a worker and was not applied/);
    await Promise.all(held);
  });
});
