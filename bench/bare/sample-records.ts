import type { OrderRecord } from '../../shared/src/domain/records';

/** `count` PLACED orders shaped as the service serialises them, for the bare JSON route. */
export function sampleOrderRecords(count: number): OrderRecord[] {
  const orderTime = new Date('2026-01-01T12:00:00.000Z').toISOString();
  return Array.from({ length: count }, (_, i) => ({
    number: i + 1,
    state: 'PLACED' as const,
    tableNumber: (i % 20) + 1,
    rows: [
      { rowNumber: 1, productId: 'sku-burger', name: 'Burger', quantity: 2, unitPrice: 1290 },
      { rowNumber: 2, productId: 'sku-fries', name: 'Fries', quantity: 1, unitPrice: 450, notes: 'no salt' },
    ],
    guestCount: 1,
    orderTime,
  }));
}
