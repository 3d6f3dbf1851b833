/** The order rows the tests and the benchmark order with (type-only imports: the bare ceiling server loads this). */
import type { OrderRecord } from '@pos/shared/domain/records';
import type { RowInput } from '@pos/shared/schemas/requests';

/** Two rows, one with a note; prices in minor units. */
export const SAMPLE_ROWS: RowInput[] = [
  { productId: 'sku-burger', name: 'Burger', quantity: 2, unitPrice: 1290 },
  { productId: 'sku-fries', name: 'Fries', quantity: 1, unitPrice: 450, notes: 'no salt' },
];

/** `count` PLACED orders of SAMPLE_ROWS shaped as the service serialises them. */
export function sampleOrderRecords(count: number): OrderRecord[] {
  const orderTime = new Date('2026-01-01T12:00:00.000Z').toISOString();
  return Array.from({ length: count }, (_, i) => ({
    number: i + 1,
    state: 'PLACED' as const,
    tableNumber: (i % 20) + 1,
    rows: SAMPLE_ROWS.map((row, r) => ({ rowNumber: r + 1, ...row })),
    guestCount: 1,
    orderTime,
  }));
}
