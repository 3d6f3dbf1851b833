/**
 * What one key can make Redis keep under `Idempotency-Key`: nothing for a request refused by its
 * checks, and no more than its scope's quota of records (IDEMPOTENCY_MAX_RECORDS, and
 * IDEMPOTENCY_MAX_CUSTOMER_RECORDS for customer keys) however many fresh keys it sends. Records
 * and their memory are read straight from Redis (SCAN under the stack's prefix, MEMORY USAGE).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import type { OrderRecord } from '@pos/shared/domain/records';
import { createApp } from '@pos/api/app';
import type { AppContext } from '@pos/api/context';
import { idempotency } from '@pos/api/middleware/idempotency';
import { jsonBody } from '@pos/api/middleware/json-body';
import { createRouter } from '@pos/api/routes/router';
import { customerAt } from '../support/customer';
import { registerAt } from '../support/fixtures';
import { adminHeader, call, HttpResult, sampleRows } from '../support/http';
import { useStack } from '../support/stack';
import { eventually } from '../support/wait';

const keyed = (extra: Record<string, string> = {}) => ({ 'Idempotency-Key': randomUUID(), ...extra });

/** Every idempotency key of the stack (records and the scopes' counts), by SCAN. */
async function idempotencyKeys(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:idem*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** The records (strings), and the bytes every idempotency key of the stack takes. */
async function idempotencyFootprint(redis: Redis, prefix: string): Promise<{ records: number; bytes: number }> {
  let records = 0;
  let bytes = 0;
  for (const key of await idempotencyKeys(redis, prefix)) {
    if ((await redis.type(key)) === 'string') records += 1;
    bytes += Number(await redis.memory('USAGE', key));
  }
  return { records, bytes };
}

describe('requests refused by their checks keep nothing', () => {
  const stack = useStack();
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(stack.env.REDIS_URL!);
  });
  afterAll(async () => {
    redis?.disconnect();
    await stack?.close();
  });

  it('300 keyed requests answered 400 by validation leave no record in Redis; work that answers 400 is kept', async () => {
    const { location, key } = await registerAt(stack, 'Refusals', 100);
    const customer = await customerAt(stack, location.id, 11, 3);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const admin = adminHeader(stack.env);
    const base = stack.baseUrl;
    const adminBase = `${stack.operatorOrigin}/admin/v1`;
    const refusals: [string, string, Record<string, string>, unknown][] = [
      ['PUT', `${base}/orders/${order.number}/statusupdate`, { api_key: key }, { newState: 'EATEN' }],
      ['PUT', `${base}/orders/${order.number}/statusupdate`, { api_key: key }, {}],
      ['PUT', `${base}/orders/0/statusupdate`, { api_key: key }, { newState: 'COMPLETED' }],
      ['POST', `${base}/orders/abc/failure`, { api_key: key }, {}],
      ['POST', `${base}/orders/${order.number}/failure`, { api_key: key }, { reason: 42 }],
      ['DELETE', `${base}/commands/-1`, { api_key: key }, undefined],
      ['POST', `${base}/customer/orders`, { api_key: customer.key }, { rows: [] }],
      ['POST', `${base}/customer/orders`, { api_key: customer.key }, { rows: sampleRows, tableNumber: 99 }],
      ['PUT', `${base}/customer/orders/0/rows`, { api_key: customer.key }, { rows: sampleRows }],
      ['POST', `${base}/customer/orders/x/finish`, { api_key: customer.key }, undefined],
      ['POST', `${base}/customer/commands`, { api_key: customer.key }, { kind: 'EXPORT_DATA' }],
      ['POST', `${base}/customer/commands`, { api_key: customer.key }, { kind: 'REQUEST_BILL', tableNumber: 4 }],
      ['POST', `${adminBase}/locations`, admin, {}],
      ['POST', `${adminBase}/locations/${location.id}/orders`, admin, { rows: [] }],
      ['PUT', `${adminBase}/locations/${location.id}/orders/abc/statusupdate`, admin, { newState: 'COMPLETED' }],
      ['POST', `${adminBase}/locations/${location.id}/service-sessions`, admin, { deviceId: '' }],
    ];
    const answers: HttpResult[] = [];
    for (let sent = 0; sent < 300; sent += 20) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, (_, i) => {
            const [method, url, headers, body] = refusals[(sent + i) % refusals.length]!;
            return call(method, url, { headers: keyed(headers), body });
          }),
        )),
      );
    }
    expect(answers.filter((answer) => answer.status !== 400).map((answer) => answer.text)).toEqual([]);
    expect(answers).toHaveLength(300);
    // Refused before authentication too: a 401 keeps nothing.
    expect(
      (
        await call('PUT', `${base}/orders/${order.number}/statusupdate`, {
          headers: keyed({ api_key: 'pos_nope' }),
          body: { newState: 'COMPLETED' },
        })
      ).status,
    ).toBe(401);
    expect(await idempotencyKeys(redis, stack.env.REDIS_PREFIX!)).toEqual([]);

    // The answer of the work itself is kept, a 400 included: the worker found no such order.
    const missing = keyed({ api_key: key });
    const first = await call('PUT', `${base}/orders/4242/statusupdate`, {
      headers: missing,
      body: { newState: 'COMPLETED' },
    });
    expect([first.status, first.json().detail]).toEqual([400, 'Order does not exist']);
    const again = await call('PUT', `${base}/orders/4242/statusupdate`, {
      headers: missing,
      body: { newState: 'COMPLETED' },
    });
    expect([again.status, again.headers.get('idempotent-replayed'), again.text]).toEqual([400, 'true', first.text]);
    expect((await idempotencyFootprint(redis, stack.env.REDIS_PREFIX!)).records).toBe(1);
  });

  it('a write route whose handler never calls beginWork answers 500, with or without a key, and keeps nothing', async () => {
    const deps = stack.api.deps;
    const router = createRouter('/forgetful');
    router.post(
      '/write',
      jsonBody(1024, { refuseOtherTypes: true }),
      idempotency(deps.idempotency, () => ({ scope: 'forgetful', maxRecords: 10 })),
      (ctx: AppContext) => {
        ctx.body = { done: true };
      },
    );
    const server = http.createServer(createApp(deps, [router]).callback()).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const before = await idempotencyKeys(redis, stack.env.REDIS_PREFIX!);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/forgetful/write`;
      for (const headers of [{}, keyed()]) {
        const answer = await call('POST', url, { headers, body: {} });
        expect([answer.status, answer.json().title]).toEqual([500, 'Internal server error']);
      }
      expect((await idempotencyKeys(redis, stack.env.REDIS_PREFIX!)).sort()).toEqual(before.sort());
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('each scope keeps at most its quota of records', () => {
  const stack = useStack({ IDEMPOTENCY_MAX_CUSTOMER_RECORDS: '5', IDEMPOTENCY_MAX_RECORDS: '8' });
  let redis: Redis;
  const prefix = () => stack.env.REDIS_PREFIX!;

  beforeAll(async () => {
    redis = new Redis(stack.env.REDIS_URL!);
  });
  afterAll(async () => {
    redis?.disconnect();
  });

  const expectQuota = (answer: HttpResult, max: number) => {
    expect(answer.status).toBe(429);
    expect(answer.json()).toMatchObject({ title: 'Too many requests' });
    expect(answer.json().detail).toMatch(
      new RegExp(
        `^This caller already holds ${max} Idempotency-Key answers, the most it may; the oldest expires in \\d+ s$`,
      ),
    );
    // until the oldest record expires: IDEMPOTENCY_TTL (24 h) after it was kept
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(24 * 3600 - 300);
    expect(retryAfter).toBeLessThanOrEqual(24 * 3600);
  };

  it('a customer replacing rows with fresh keys gets 429 at its quota; records and memory stop growing', async () => {
    const location = await stack.admin.createLocation('Phones');
    const customer = await customerAt(stack, location.id, 21, 2);
    const rows = (n: number) => ({
      rows: Array.from({ length: 40 }, (_, i) => ({ ...sampleRows[0]!, productId: `sku-${i}`, quantity: n + 1 })),
    });
    const firstKey = keyed({ api_key: customer.key });
    const before = (await idempotencyFootprint(redis, prefix())).records;
    const created = await call('POST', `${customer.url}/orders`, { headers: firstKey, body: rows(0) });
    expect(created.status).toBe(201);
    const number = created.json<OrderRecord>().number;
    const replace = (n: number, headers = keyed({ api_key: customer.key })) =>
      call('PUT', `${customer.url}/orders/${number}/rows`, { headers, body: rows(n) });
    for (let n = 1; n < 5; n++) expect((await replace(n)).status).toBe(200);

    expectQuota(await replace(5), 5);
    const atQuota = await idempotencyFootprint(redis, prefix());
    expect(atQuota.records).toBe(before + 5);
    const refused = [];
    for (let n = 6; n < 46; n++) refused.push((await replace(n)).status);
    expect(refused).toEqual(Array(40).fill(429));
    const after = await idempotencyFootprint(redis, prefix());
    expect(after).toEqual(atQuota);

    // At its quota the session still gets its kept answers back, and may write without a key.
    const replayed = await call('POST', `${customer.url}/orders`, { headers: firstKey, body: rows(0) });
    expect([replayed.status, replayed.headers.get('idempotent-replayed'), replayed.text]).toEqual([
      201,
      'true',
      created.text,
    ]);
    expect(
      (await call('PUT', `${customer.url}/orders/${number}/rows`, { apiKey: customer.key, body: rows(99) })).status,
    ).toBe(200);
    // The quota is the session's: another customer writes with a key.
    const other = await customerAt(stack, location.id, 22, 3);
    expect(
      (
        await call('POST', `${other.url}/orders`, {
          headers: keyed({ api_key: other.key }),
          body: { rows: sampleRows },
        })
      ).status,
    ).toBe(201);
    expect((await idempotencyFootprint(redis, prefix())).records).toBe(before + 6);
  });

  it("a register's quota (IDEMPOTENCY_MAX_RECORDS) holds the same way, and so does the admin token's", async () => {
    const { location, key } = await registerAt(stack, 'Busy register', 1000);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const before = (await idempotencyFootprint(redis, prefix())).records;
    const report = () =>
      call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, {
        headers: keyed({ api_key: key }),
        body: { reason: 'jam' },
      });
    for (let n = 0; n < 8; n++) expect((await report()).status).toBe(200);
    expectQuota(await report(), 8);
    const refused = await Promise.all(Array.from({ length: 30 }, () => report()));
    expect(refused.map((answer) => answer.status)).toEqual(Array(30).fill(429));
    expect((await idempotencyFootprint(redis, prefix())).records).toBe(before + 8);

    const admin = adminHeader(stack.env);
    const command = () =>
      call('POST', `${stack.operatorOrigin}/admin/v1/locations/${location.id}/commands`, {
        headers: keyed(admin),
        body: { kind: 'EXPORT_DATA' },
      });
    for (let n = 0; n < 8; n++) expect((await command()).status).toBe(201);
    expectQuota(await command(), 8);
    expect((await idempotencyFootprint(redis, prefix())).records).toBe(before + 16);
  });
});

describe('a place in the quota frees when the oldest record expires', () => {
  const stack = useStack({ IDEMPOTENCY_MAX_CUSTOMER_RECORDS: '2', IDEMPOTENCY_TTL: '2s' });

  it('Retry-After says when, and a keyed write is taken again then', async () => {
    const location = await stack.admin.createLocation('Expiring');
    const customer = await customerAt(stack, location.id, 31);
    const command = () =>
      call('POST', `${customer.url}/commands`, {
        headers: keyed({ api_key: customer.key }),
        body: { kind: 'READ_TABLE_STATE' },
      });
    expect((await command()).status).toBe(201);
    expect((await command()).status).toBe(201);
    const refused = await command();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    let answer: HttpResult | undefined;
    await eventually(async () => (answer = await command()).status !== 429, 'a keyed write taken again', 10_000);
    expect(answer!.status).toBe(201);
  });
});
