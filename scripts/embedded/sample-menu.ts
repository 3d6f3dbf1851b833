/** The menus the tests, the benchmark and the demo sell from (type-only imports, like sample-rows.ts). */
import type { MenuDocument } from '@pos/shared/schemas/menu';

/** A small menu: SAMPLE_ROWS' products at SAMPLE_ROWS' prices, a burger that takes a cheese and up to two extras. */
export const SAMPLE_MENU: MenuDocument = {
  currency: 'EUR',
  items: [
    { productId: 'sku-burger', name: 'Burger', price: 1290, category: 'Mains', modifierGroupIds: ['cheese', 'extras'] },
    { productId: 'sku-fries', name: 'Fries', price: 450, category: 'Sides' },
    { productId: 'sku-salad', name: 'Salad', price: 890, category: 'Mains', description: 'Leaves of the season' },
  ],
  modifierGroups: [
    {
      id: 'cheese',
      name: 'Cheese',
      min: 1,
      max: 1,
      options: [
        { productId: 'opt-cheddar', name: 'Cheddar', price: 0 },
        { productId: 'opt-blue', name: 'Blue cheese', price: 100 },
      ],
    },
    {
      id: 'extras',
      name: 'Extras',
      min: 0,
      max: 2,
      options: [
        { productId: 'opt-bacon', name: 'Bacon', price: 150 },
        { productId: 'opt-egg', name: 'Fried egg', price: 120 },
      ],
    },
  ],
};

/**
 * A menu of `count` items (the first two SAMPLE_ROWS' products at their
 * prices), each taking the groups of SAMPLE_MENU.
 */
export function largeMenu(count: number): MenuDocument {
  const items: MenuDocument['items'] = [
    { productId: 'sku-burger', name: 'Burger', price: 1290 },
    { productId: 'sku-fries', name: 'Fries', price: 450 },
  ];
  for (let i = items.length; i < count; i++) {
    items.push({
      productId: `sku-${i}`,
      name: `Dish ${i}`,
      price: 500 + (i % 2000),
      category: `Category ${i % 20}`,
      modifierGroupIds: ['extras'],
    });
  }
  return { currency: 'EUR', items, modifierGroups: [SAMPLE_MENU.modifierGroups![1]!] };
}
