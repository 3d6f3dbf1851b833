import { SentMemory } from '@pos/api/stream/sent-memory';
import { commandFrame, orderFrame } from '@pos/api/stream/stream-frame';
import type { OrderRecord } from '@pos/shared/domain/records';

const record = (
  number: number,
  state: OrderRecord['state'] = 'PLACED',
  updated = '2026-11-25T10:00:00.000Z',
): OrderRecord => ({
  number,
  state,
  orderTime: updated,
  guestCount: 1,
  rows: [{ rowNumber: 1, productId: 'p', name: 'Burger', quantity: 1, unitPrice: 100 }],
});

describe('SentMemory: what a stream sent of each order lately', () => {
  it('knows an order sent in this version or a later one, and not an earlier one', () => {
    const memory = new SentMemory();
    memory.remember(orderFrame(record(1), { version: 3 }), 1_000, 0);
    expect(memory.has(orderFrame(record(1), { version: 3 }), 0)).toBe(true);
    expect(memory.has(orderFrame(record(1), { version: 2 }), 0)).toBe(true);
    expect(memory.has(orderFrame(record(1, 'COMPLETED'), { version: 4 }), 0)).toBe(false);
    expect(memory.has(orderFrame(record(2), { version: 1 }), 0)).toBe(false);
  });

  it('tells versionless forms apart by their record', () => {
    const memory = new SentMemory();
    memory.remember(orderFrame(record(1)), 1_000, 0);
    expect(memory.has(orderFrame(record(1)), 0)).toBe(true);
    expect(memory.has(orderFrame(record(1, 'PLACED', '2026-11-25T10:00:01.000Z')), 0)).toBe(false);
  });

  it('answers for what was sent since the moment asked about, and forgets what was sent before the cut', () => {
    const memory = new SentMemory();
    memory.remember(orderFrame(record(1), { version: 1 }), 1_000, 0);
    memory.remember(orderFrame(record(2), { version: 1 }), 2_000, 0);
    expect(memory.has(orderFrame(record(1), { version: 1 }), 1_500)).toBe(false);
    memory.remember(orderFrame(record(3), { version: 1 }), 3_000, 1_500);
    expect(memory.size).toBe(2);
    expect(memory.has(orderFrame(record(1), { version: 1 }), 0)).toBe(false);
    expect(memory.has(orderFrame(record(2), { version: 1 }), 0)).toBe(true);
  });

  it('keeps one entry per order, moved to the newest when sent again', () => {
    const memory = new SentMemory();
    memory.remember(orderFrame(record(1), { version: 1 }), 1_000, 0);
    memory.remember(orderFrame(record(2), { version: 1 }), 2_000, 0);
    memory.remember(orderFrame(record(1), { version: 2 }), 3_000, 0);
    // order 2 is now the oldest: a cut between 2 and 3 s forgets it alone
    memory.remember(orderFrame(record(3), { version: 1 }), 4_000, 2_500);
    expect(memory.has(orderFrame(record(1), { version: 2 }), 0)).toBe(true);
    expect(memory.has(orderFrame(record(2), { version: 1 }), 0)).toBe(false);
    expect(memory.size).toBe(2);
  });

  it('holds nothing until the first order and after clear', () => {
    const memory = new SentMemory();
    expect(memory.size).toBe(0);
    expect(memory.has(commandFrame({ number: 1, state: 'PLACED', exportMainData: true }), 0)).toBe(false);
    memory.remember(orderFrame(record(1)), 1_000, 0);
    memory.clear();
    expect(memory.size).toBe(0);
  });
});
