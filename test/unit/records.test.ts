import { CommandDoc, OrderDoc, toCommandRecord, toOrderRecord } from '@pos/shared/domain/records';

const base: OrderDoc = {
  _id: 'loc:1',
  locationId: 'loc',
  number: 1,
  state: 'PLACED',
  version: 3,
  failureCount: 1,
  appliedJobs: ['j1'],
  rows: [{ rowNumber: 1, productId: 'sku-1', name: 'Burger', quantity: 2, unitPrice: 1290 }],
  guestCount: 1,
  createdAt: new Date(0),
  updatedAt: new Date(0),
};

describe('order records', () => {
  it('carry only the interface fields, with ISO-8601 UTC millisecond timestamps', () => {
    const record = toOrderRecord({
      ...base,
      tableNumber: 4,
      userNumber: 7,
      orderTime: new Date('2026-11-21T07:11:04.092Z'),
    });
    expect(record).toEqual({
      number: 1,
      state: 'PLACED',
      tableNumber: 4,
      userNumber: 7,
      rows: [{ rowNumber: 1, productId: 'sku-1', name: 'Burger', quantity: 2, unitPrice: 1290 }],
      guestCount: 1,
      orderTime: '2026-11-21T07:11:04.092Z',
    });
  });

  it('never serialise null: absent and null values are absent keys', () => {
    const doc = {
      ...base,
      tableNumber: null,
      completeTime: undefined,
      rows: [{ ...base.rows[0]!, notes: null }],
    } as unknown as OrderDoc;
    const json = JSON.stringify(toOrderRecord(doc));
    expect(json).not.toContain('null');
    expect(json).not.toContain('tableNumber');
    expect(json).not.toContain('notes');
  });

  it('keep the order of keys stable (number, state first)', () => {
    expect(Object.keys(toOrderRecord({ ...base, failedTime: new Date(1) }))).toEqual([
      'number',
      'state',
      'rows',
      'guestCount',
      'failedTime',
    ]);
  });
});

describe('command records', () => {
  const command = (kind: CommandDoc['kind'], tableNumber?: number): CommandDoc => ({
    _id: 'loc:5',
    locationId: 'loc',
    number: 5,
    kind,
    createdAt: new Date(0),
    expiresAt: new Date(1),
    ...(tableNumber ? { tableNumber } : {}),
  });

  it.each([
    ['READ_TABLE_STATE', { readTableState: true }],
    ['REQUEST_BILL', { paymentNumber: 1 }],
    ['EXPORT_DATA', { exportMainData: true }],
    ['FETCH_REMOTE_MENU', { exportMainData: true }],
  ] as const)('%s is carried by its field, state always PLACED, no rows', (kind, fields) => {
    expect(toCommandRecord(command(kind, 3))).toEqual({ number: 5, state: 'PLACED', tableNumber: 3, ...fields });
  });
});
