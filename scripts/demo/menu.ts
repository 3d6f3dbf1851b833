import type { RowInput } from '@pos/shared/schemas/requests';

/** What the demo's customers order from; prices in cents. */
const MENU: { item: RowInput; notes: string[] }[] = [
  {
    item: { productId: 'sku-burger', name: 'Burger', quantity: 1, unitPrice: 1290 },
    notes: ['no onions', 'well done'],
  },
  { item: { productId: 'sku-veggie', name: 'Veggie burger', quantity: 1, unitPrice: 1190 }, notes: ['no cheese'] },
  { item: { productId: 'sku-fries', name: 'Fries', quantity: 1, unitPrice: 450 }, notes: ['no salt', 'extra ketchup'] },
  { item: { productId: 'sku-salad', name: 'Salad', quantity: 1, unitPrice: 890 }, notes: ['dressing aside'] },
  { item: { productId: 'sku-lemonade', name: 'Lemonade', quantity: 1, unitPrice: 350 }, notes: ['no ice'] },
  { item: { productId: 'sku-coffee', name: 'Coffee', quantity: 1, unitPrice: 300 }, notes: ['oat milk'] },
  { item: { productId: 'sku-cake', name: 'Cheesecake', quantity: 1, unitPrice: 550 }, notes: [] },
];

export type Random = () => number;

function pick<T>(items: readonly T[], random: Random): T {
  return items[Math.floor(random() * items.length)]!;
}

/** One menu item, sometimes two of it, sometimes with a note. */
export function menuRow(random: Random): RowInput {
  const { item, notes } = pick(MENU, random);
  const row: RowInput = { ...item, quantity: random() < 0.3 ? 2 : 1 };
  if (notes.length > 0 && random() < 0.25) row.notes = pick(notes, random);
  return row;
}

export function menuRows(count: number, random: Random): RowInput[] {
  return Array.from({ length: count }, () => menuRow(random));
}

export function describeRows(rows: { name: string; quantity: number; notes?: string }[]): string {
  return rows.map((r) => `${r.quantity}× ${r.name}${r.notes ? ` (${r.notes})` : ''}`).join(', ');
}

export function totalOf(rows: { quantity: number; unitPrice: number }[]): string {
  return (rows.reduce((sum, r) => sum + r.quantity * r.unitPrice, 0) / 100).toFixed(2);
}
