/** Bad input on the customer app API: each answers a 400 problem (or 404/409) and changes nothing. */
import type { OrderRecord } from '@pos/shared/domain/records';
import { Customer, customerAt } from '../support/customer';
import { useDb } from '../support/fixtures';
import { call, HttpResult, sampleRows } from '../support/http';
import { useStack } from '../support/stack';

const row = sampleRows[0]!;
const withRow = (patch: Record<string, unknown>) => ({ rows: [{ ...row, ...patch }] });
const without = (field: string) => {
  const copy: Record<string, unknown> = { ...row };
  delete copy[field];
  return { rows: [copy] };
};

/** [case, body, title, detail pattern] */
const BAD_ORDERS: [string, unknown, string, RegExp][] = [
  ['empty rows', { rows: [] }, 'Validation error', /^rows must NOT have fewer than 1 items$/],
  ['no rows', { tableNumber: 4 }, 'Illegal argument', /^rows is required\.$/],
  ['zero quantity', withRow({ quantity: 0 }), 'Validation error', /^rows\.0\.quantity must be >= 1$/],
  ['negative quantity', withRow({ quantity: -2 }), 'Validation error', /^rows\.0\.quantity must be >= 1$/],
  ['fractional quantity', withRow({ quantity: 1.5 }), 'Validation error', /^rows\.0\.quantity must be integer$/],
  ['huge quantity', withRow({ quantity: 1_000_000 }), 'Validation error', /^rows\.0\.quantity must be <= /],
  ['negative price', withRow({ unitPrice: -1 }), 'Validation error', /^rows\.0\.unitPrice must be >= 0$/],
  ['fractional price', withRow({ unitPrice: 12.5 }), 'Validation error', /^rows\.0\.unitPrice must be integer$/],
  ['price as a string', withRow({ unitPrice: '1290' }), 'Validation error', /^rows\.0\.unitPrice must be integer$/],
  ['absurd price', withRow({ unitPrice: 1e12 }), 'Validation error', /^rows\.0\.unitPrice must be <= /],
  ['missing price', without('unitPrice'), 'Illegal argument', /^rows\.0\.unitPrice is required\.$/],
  [
    'oversize notes',
    withRow({ notes: 'x'.repeat(501) }),
    'Validation error',
    /^rows\.0\.notes must NOT have more than 500 characters$/,
  ],
  ['notes not a string', withRow({ notes: 5 }), 'Validation error', /^rows\.0\.notes must be string$/],
  [
    'empty product id',
    withRow({ productId: '' }),
    'Validation error',
    /^rows\.0\.productId must NOT have fewer than 1 characters$/,
  ],
  ['product id a number', withRow({ productId: 7 }), 'Validation error', /^rows\.0\.productId must be string$/],
  ['unknown row field', withRow({ discount: 5 }), 'Validation error', /^rows\.0 has unknown field discount$/],
  ['rows an object', { rows: { 0: row } }, 'Validation error', /^rows must be array$/],
  ['row a string', { rows: ['Burger'] }, 'Validation error', /^rows\.0 must be object$/],
  ['table as a string', { rows: sampleRows, tableNumber: '4' }, 'Validation error', /^tableNumber must be integer$/],
  ['table zero', { rows: sampleRows, tableNumber: 0 }, 'Validation error', /^tableNumber must be >= 1$/],
  ['unknown field', { rows: sampleRows, userNumber: 9 }, 'Validation error', /^body has unknown field userNumber$/],
  ['body an array', [row], 'Validation error', /^body must be object$/],
  [
    'too many rows',
    { rows: Array.from({ length: 201 }, () => row) },
    'Validation error',
    /^rows must NOT have more than 200 items$/,
  ],
  // Text reaches register screens and kitchen printers: no control characters, no bidi controls.
  [
    'a NUL in a name',
    withRow({ name: 'Burger\u0000' }),
    'Validation error',
    /^rows\.0\.name must be one line without control characters, line separators or bidirectional controls$/,
  ],
  [
    'an escape sequence in a name',
    withRow({ name: '\u001b[2JBurger' }),
    'Validation error',
    /^rows\.0\.name must be one line/,
  ],
  ['a newline in a name', withRow({ name: 'Bur\nger' }), 'Validation error', /^rows\.0\.name must be one line/],
  [
    'a C1 control in a product id',
    withRow({ productId: 'sku\u009b1' }),
    'Validation error',
    /^rows\.0\.productId must be one line/,
  ],
  [
    'a bidi override in a product id',
    withRow({ productId: 'sku-\u202e1' }),
    'Validation error',
    /^rows\.0\.productId must be one line/,
  ],
  [
    'a line separator in a name',
    withRow({ name: 'Burger\u2028Fries' }),
    'Validation error',
    /^rows\.0\.name must be one line/,
  ],
  [
    'a paragraph separator in a name',
    withRow({ name: 'Burger\u2029' }),
    'Validation error',
    /^rows\.0\.name must be one line/,
  ],
  [
    'a right-to-left mark in a name',
    withRow({ name: '\u200fBurger' }),
    'Validation error',
    /^rows\.0\.name must be one line/,
  ],
  [
    'a left-to-right mark in a product id',
    withRow({ productId: 'sku-\u200e1' }),
    'Validation error',
    /^rows\.0\.productId must be one line/,
  ],
  [
    'an Arabic letter mark in a name',
    withRow({ name: 'Burger\u061c' }),
    'Validation error',
    /^rows\.0\.name must be one line/,
  ],
  [
    'a bidi isolate in a name',
    withRow({ name: 'Burger \u2067x\u2069' }),
    'Validation error',
    /^rows\.0\.name must be one line/,
  ],
  [
    'a lone surrogate in a name',
    withRow({ name: 'Burger \ud800' }),
    'Validation error',
    /^rows\.0\.name must be one line/,
  ],
  [
    'an escape sequence in notes',
    withRow({ notes: 'no onions\u001b[5m' }),
    'Validation error',
    /^rows\.0\.notes must not contain control characters \(but tab and newline\) or bidirectional controls$/,
  ],
  [
    'a carriage return in notes',
    withRow({ notes: 'no onions\r\nextra cheese' }),
    'Validation error',
    /^rows\.0\.notes must not contain control/,
  ],
  [
    'a bidi override in notes',
    withRow({ notes: 'allergy: \u202enuts' }),
    'Validation error',
    /^rows\.0\.notes must not contain control/,
  ],
  [
    'an unknown field with a huge name',
    withRow({ ['x'.repeat(1000)]: 1 }),
    'Validation error',
    /^rows\.0 has unknown fields$/,
  ],
];

describe('customer app input validation', () => {
  // One customer makes every bad request below, and each rows replacement needs an open order.
  const stack = useStack({ CUSTOMER_MAX_OPEN_ORDERS: '100' });
  const db = useDb(stack);
  let customer: Customer;
  let locationId: string;

  beforeAll(async () => {
    const location = await stack.admin.createLocation('Validation');
    locationId = location.id;
    customer = await customerAt(stack, locationId, 7, 2);
  });

  /**
   * The location's orders by state and its commands, as stored: a customer's order is SELECTING
   * (no list of the register shows it) until it is finished.
   */
  const stored = async () => ({
    orders: await db.db
      .collection('orders')
      .aggregate([{ $match: { locationId } }, { $group: { _id: '$state', count: { $sum: 1 } } }, { $sort: { _id: 1 } }])
      .toArray(),
    commands: await db.db.collection('commands').countDocuments({ locationId }),
  });
  /** Makes a request that must be refused, and checks that it stored nothing. */
  const refused = async (request: () => Promise<HttpResult>): Promise<HttpResult> => {
    const before = await stored();
    const res = await request();
    expect(await stored()).toEqual(before);
    return res;
  };

  const expectProblem = (
    res: Awaited<ReturnType<typeof call>>,
    status: number,
    title: string,
    detail: RegExp,
    instance: string,
  ) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = res.json();
    expect(body).toMatchObject({ type: 'about:blank', title, status, instance });
    expect(body.detail).toMatch(detail);
  };

  it.each(BAD_ORDERS)('refuses an order with %s', async (_name, body, title, detail) => {
    const res = await refused(() => call('POST', `${customer.url}/orders`, { apiKey: customer.key, body }));
    expectProblem(res, 400, title, detail, '/api/v1/customer/orders');
  });

  it.each(BAD_ORDERS.filter(([name]) => !['table as a string', 'table zero', 'unknown field'].includes(name)))(
    'refuses a rows replacement with %s, leaving the rows as they were',
    async (_name, body, title, detail) => {
      const order = (
        await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } })
      ).json<OrderRecord>();
      const res = await refused(() =>
        call('PUT', `${customer.url}/orders/${order.number}/rows`, { apiKey: customer.key, body }),
      );
      expectProblem(res, 400, title, detail, `/api/v1/customer/orders/${order.number}/rows`);
      const after = await call('GET', `${customer.url}/orders/${order.number}`, { apiKey: customer.key });
      expect(after.json()).toEqual(order);
    },
  );

  it('accepts tabs and newlines in notes, and text in any script', async () => {
    const rows = [{ ...row, name: 'Crème brûlée 🍮 حلوى', notes: 'no nuts\n\tplease, שלום' }];
    const res = await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows } });
    expect(res.status).toBe(201);
    expect(res.json().rows).toEqual([{ rowNumber: 1, ...rows[0] }]);
  });

  it('refuses a table number on a rows replacement (the table is set at creation)', async () => {
    const order = (
      await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } })
    ).json<OrderRecord>();
    const res = await refused(() =>
      call('PUT', `${customer.url}/orders/${order.number}/rows`, {
        apiKey: customer.key,
        body: { rows: sampleRows, tableNumber: 3 },
      }),
    );
    expectProblem(
      res,
      400,
      'Validation error',
      /^body has unknown field tableNumber$/,
      `/api/v1/customer/orders/${order.number}/rows`,
    );
    expect((await call('GET', `${customer.url}/orders/${order.number}`, { apiKey: customer.key })).json()).toEqual(
      order,
    );
  });

  it('refuses null for an optional field: absent means absent, and null is never stored', async () => {
    const notes = await refused(() =>
      call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: [{ ...row, notes: null }] } }),
    );
    expectProblem(notes, 400, 'Validation error', /^rows\.0\.notes must be string$/, '/api/v1/customer/orders');
    const table = await refused(() =>
      call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: [row], tableNumber: null } }),
    );
    expectProblem(table, 400, 'Validation error', /^tableNumber must be integer$/, '/api/v1/customer/orders');
  });

  it('refuses malformed JSON, and bodies over the limit', async () => {
    const malformed = await refused(() =>
      call('POST', `${customer.url}/orders`, {
        apiKey: customer.key,
        body: '{"rows": [',
        headers: { 'content-type': 'application/json' },
      }),
    );
    expectProblem(malformed, 400, 'Validation error', /^Malformed JSON/, '/api/v1/customer/orders');
    const big = await refused(() =>
      call('POST', `${customer.url}/orders`, {
        apiKey: customer.key,
        body: { rows: [{ ...row, notes: 'x'.repeat(70_000) }] },
      }),
    );
    expect(big.status).toBe(413);
  });

  it.each([
    [
      'an unknown kind',
      { kind: 'MAKE_COFFEE' },
      'Validation error',
      /^kind must be one of READ_TABLE_STATE, REQUEST_BILL$/,
    ],
    [
      'EXPORT_DATA (the operator’s)',
      { kind: 'EXPORT_DATA' },
      'Validation error',
      /^kind must be one of READ_TABLE_STATE, REQUEST_BILL$/,
    ],
    [
      'FETCH_REMOTE_MENU (the operator’s)',
      { kind: 'FETCH_REMOTE_MENU' },
      'Validation error',
      /^kind must be one of READ_TABLE_STATE, REQUEST_BILL$/,
    ],
    ['a lower-case kind', { kind: 'request_bill' }, 'Validation error', /^kind must be one of/],
    ['no kind', { tableNumber: 2 }, 'Illegal argument', /^kind is required\.$/],
    ['a kind that is not a string', { kind: 1 }, 'Validation error', /^kind must be string$/],
    [
      'a table as a string',
      { kind: 'REQUEST_BILL', tableNumber: 'two' },
      'Validation error',
      /^tableNumber must be integer$/,
    ],
    [
      'an unknown field',
      { kind: 'REQUEST_BILL', paymentNumber: 2 },
      'Validation error',
      /^body has unknown field paymentNumber$/,
    ],
  ])('refuses a command with %s', async (_name, body, title, detail) => {
    const res = await refused(() => call('POST', `${customer.url}/commands`, { apiKey: customer.key, body }));
    expectProblem(res, 400, title, detail, '/api/v1/customer/commands');
  });

  it.each(['abc', '0', '-1', '1.5', '99999999999'])('refuses the order number %s in a path', async (number) => {
    for (const [method, suffix] of [
      ['GET', ''],
      ['PUT', '/rows'],
      ['POST', '/finish'],
      ['POST', '/submit'],
    ] as const) {
      const res = await refused(() =>
        call(method, `${customer.url}/orders/${number}${suffix}`, {
          apiKey: customer.key,
          ...(method === 'PUT' ? { body: { rows: sampleRows } } : {}),
        }),
      );
      expectProblem(
        res,
        400,
        'Illegal argument',
        /^Order number must be a positive integer$/,
        `/api/v1/customer/orders/${number}${suffix}`,
      );
    }
  });

  it('answers unknown customer routes with 404 and wrong methods with 405', async () => {
    const unknown = await call('GET', `${customer.url}/menus`, { apiKey: customer.key });
    expectProblem(unknown, 404, 'Not found', /^No route for GET/, '/api/v1/customer/menus');
    const wrongMethod = await call('PATCH', `${customer.url}/orders`, { apiKey: customer.key });
    expect(wrongMethod.status).toBe(405);
  });
});
