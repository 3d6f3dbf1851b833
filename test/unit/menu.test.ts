/** The menu's rules as pure functions (shared/src/domain/menu.ts): validity, pricing, availability, ETags. */
import {
  countsOf,
  menuErrors,
  menuEtag,
  menuIdOf,
  menuView,
  priceIndex,
  priceRows,
  snoozedAt,
  unavailableRows,
  versionOfEtag,
} from '@pos/shared/domain/menu';
import { checkMenuShape, type MenuDocument } from '@pos/shared/schemas/menu';
import { webhooksOf } from '@pos/shared/webhooks/event-types';
import { SAMPLE_MENU } from '../../scripts/embedded/sample-menu';

const LIMITS = { items: 5000, groups: 500, options: 50 };
const now = new Date('2026-11-21T12:00:00.000Z');
const none = new Map();
const price = (rows: Parameters<typeof priceRows>[1], snoozed = none, sellUnavailable = false) =>
  priceRows(priceIndex(SAMPLE_MENU), rows, { snoozed, sellUnavailable });

describe('a menu document', () => {
  it('is valid as the sample, with its counts', () => {
    expect(checkMenuShape(SAMPLE_MENU)).toEqual({ menu: SAMPLE_MENU });
    expect(menuErrors(SAMPLE_MENU, LIMITS)).toEqual([]);
    expect(countsOf(SAMPLE_MENU)).toEqual({ items: 3, modifierGroups: 2, options: 4 });
  });

  it('lists every error of its shape, each with its JSON pointer', () => {
    const result = checkMenuShape({
      currency: 'euro',
      items: [
        { productId: '', name: 'A', price: 100_000_001 },
        { name: 'B\u202e', price: 1, extra: true },
      ],
      modifierGroups: [{}],
    });
    expect('errors' in result && result.errors).toEqual(
      expect.arrayContaining([
        { pointer: '/currency', detail: 'must match pattern "^[A-Z]{3}$"' },
        { pointer: '/items/0/productId', detail: 'must NOT have fewer than 1 characters' },
        { pointer: '/items/0/price', detail: 'must be <= 100000000' },
        { pointer: '/items/1/productId', detail: 'is required' },
        { pointer: '/items/1/extra', detail: 'is not a field of the menu' },
        { pointer: '/items/1/name', detail: 'must be text without control characters or bidirectional controls' },
        { pointer: '/modifierGroups/0/id', detail: 'is required' },
      ]),
    );
    expect(checkMenuShape([])).toEqual({ errors: [{ pointer: '', detail: 'must be object' }] });
    expect(checkMenuShape({ items: null })).toEqual({ errors: [{ pointer: '/items', detail: 'must be array' }] });
  });

  it('lists every error of its rules: sizes, duplicates, undefined groups, min over max', () => {
    const menu: MenuDocument = {
      items: [
        { productId: 'a', name: 'A', price: 1, modifierGroupIds: ['g', 'ghost'] },
        { productId: 'a', name: 'A2', price: 2 },
        { productId: 'b', name: 'B', price: 3 },
      ],
      modifierGroups: [
        {
          id: 'g',
          name: 'G',
          min: 2,
          max: 1,
          options: [
            { productId: 'o', name: 'O', price: 0 },
            { productId: 'o', name: 'O2', price: 0 },
          ],
        },
        { id: 'g', name: 'G2', min: 0, max: 1, options: [{ productId: 'p', name: 'P', price: 0 }] },
      ],
    };
    expect(menuErrors(menu, { items: 2, groups: 1, options: 1 })).toEqual([
      { pointer: '/items', detail: 'has 3 items; a menu holds at most 2' },
      { pointer: '/modifierGroups', detail: 'has 2 groups; a menu holds at most 1' },
      { pointer: '/items/1/productId', detail: 'duplicates the productId at /items/0/productId' },
      { pointer: '/modifierGroups/1/id', detail: 'duplicates the group id at /modifierGroups/0/id' },
      { pointer: '/items/0/modifierGroupIds/1', detail: 'names a modifier group the menu does not define' },
      { pointer: '/modifierGroups/0/options', detail: 'has 2 options; a group holds at most 1' },
      { pointer: '/modifierGroups/0/min', detail: 'is over max (1)' },
      {
        pointer: '/modifierGroups/0/options/1/productId',
        detail: 'duplicates the option at /modifierGroups/0/options/0/productId',
      },
    ]);
  });

  it('checks its rules on a body whose shape is wrong too, passing over what they cannot read (so a 422 lists both)', () => {
    const body = {
      items: [{ productId: 'a', price: 'x' }, { productId: 'a' }, 7, { productId: 3, modifierGroupIds: ['ghost', 9] }],
      modifierGroups: [{ id: 'g', min: 2, max: 1, options: 'none' }, null],
    };
    expect(menuErrors(body, LIMITS)).toEqual([
      { pointer: '/items/1/productId', detail: 'duplicates the productId at /items/0/productId' },
      { pointer: '/items/3/modifierGroupIds/0', detail: 'names a modifier group the menu does not define' },
      { pointer: '/modifierGroups/0/min', detail: 'is over max (1)' },
    ]);
    expect(menuErrors(null, LIMITS)).toEqual([]);
  });

  it('is named by its hash: the same document, the same id; any change, another', () => {
    expect(menuIdOf(SAMPLE_MENU)).toBe(menuIdOf(structuredClone(SAMPLE_MENU)));
    expect(menuIdOf(SAMPLE_MENU)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(menuIdOf({ ...SAMPLE_MENU, currency: 'USD' })).not.toBe(menuIdOf(SAMPLE_MENU));
  });
});

describe('pricing a cart', () => {
  it("names and prices each row and modifier from the menu (the item's own price), keeping notes", () => {
    expect(
      price([
        {
          productId: 'sku-burger',
          quantity: 2,
          notes: 'well done',
          modifiers: [{ productId: 'opt-blue' }, { productId: 'opt-egg', quantity: 2 }],
        },
      ]),
    ).toEqual({
      rows: [
        {
          rowNumber: 1,
          productId: 'sku-burger',
          name: 'Burger',
          quantity: 2,
          unitPrice: 1290,
          notes: 'well done',
          modifiers: [
            { productId: 'opt-blue', name: 'Blue cheese', quantity: 1, unitPrice: 100 },
            { productId: 'opt-egg', name: 'Fried egg', quantity: 2, unitPrice: 120 },
          ],
        },
      ],
    });
    // the app's expected price and name: a matching price passes, the name is the menu's
    expect(price([{ productId: 'sku-fries', quantity: 1, name: 'Chips', unitPrice: 450 }])).toEqual({
      rows: [{ rowNumber: 1, productId: 'sku-fries', name: 'Fries', quantity: 1, unitPrice: 450 }],
    });
  });

  it('lists every mismatch of every row, with its code', () => {
    const result = price([
      { productId: 'sku-fries', quantity: 1, unitPrice: 0 },
      { productId: 'nope', quantity: 1 },
      { productId: 'sku-burger', quantity: 1 },
      {
        productId: 'sku-burger',
        quantity: 1,
        modifiers: [{ productId: 'opt-cheddar' }, { productId: 'opt-bacon', quantity: 3 }, { productId: 'sku-fries' }],
      },
      { productId: 'sku-fries', quantity: 1, modifiers: [{ productId: 'opt-bacon' }] },
    ]);
    expect(result).toEqual({
      mismatches: [
        { row: 1, productId: 'sku-fries', code: 'price_mismatch', detail: 'sku-fries costs 450, not 0' },
        { row: 2, productId: 'nope', code: 'product_not_found', detail: 'nope is not on the menu' },
        { row: 3, productId: 'sku-burger', code: 'modifier_count', detail: 'Cheese takes 1 option(s); 0 chosen' },
        {
          row: 4,
          productId: 'sku-fries',
          code: 'modifier_not_found',
          detail: 'sku-fries is not an option of sku-burger',
        },
        { row: 4, productId: 'sku-burger', code: 'modifier_count', detail: 'Extras takes 0 to 2 option(s); 3 chosen' },
        {
          row: 5,
          productId: 'opt-bacon',
          code: 'modifier_not_found',
          detail: 'opt-bacon is not an option of sku-fries',
        },
      ],
    });
  });

  it('refuses a snoozed item or option, unless the order may sell it (a counter order)', () => {
    const snoozed = snoozedAt(
      [
        { productId: 'sku-fries', until: new Date(now.getTime() + 60_000), reason: 'sold out' },
        { productId: 'opt-blue' },
      ],
      now,
    );
    const rows = [
      { productId: 'sku-fries', quantity: 1 },
      { productId: 'sku-burger', quantity: 1, modifiers: [{ productId: 'opt-blue' }] },
    ];
    expect(price(rows, snoozed)).toEqual({
      mismatches: [
        {
          row: 1,
          productId: 'sku-fries',
          code: 'product_unavailable',
          detail: 'sku-fries is unavailable until 2026-11-21T12:01:00.000Z',
        },
        { row: 2, productId: 'opt-blue', code: 'product_unavailable', detail: 'opt-blue is unavailable' },
      ],
    });
    expect('rows' in price(rows, snoozed, true)).toBe(true);
  });
});

describe('availability', () => {
  it('a snooze whose `until` has come is over, written or not', () => {
    const snoozes = [
      { productId: 'a', until: now },
      { productId: 'b', until: new Date(now.getTime() + 1) },
      { productId: 'c' },
    ];
    expect([...snoozedAt(snoozes, now).keys()]).toEqual(['b', 'c']);
    expect(snoozedAt(undefined, now).size).toBe(0);
  });

  it('stored rows checked again name each snoozed product with its row', () => {
    const rows = [
      { rowNumber: 1, productId: 'sku-fries', name: 'Fries', quantity: 1, unitPrice: 450 },
      {
        rowNumber: 2,
        productId: 'sku-burger',
        name: 'Burger',
        quantity: 1,
        unitPrice: 1290,
        modifiers: [{ productId: 'opt-blue', name: 'Blue cheese', quantity: 1, unitPrice: 100 }],
      },
    ];
    expect(unavailableRows(rows, snoozedAt([{ productId: 'opt-blue' }], now))).toEqual([
      { row: 2, productId: 'opt-blue', code: 'product_unavailable', detail: 'opt-blue is unavailable' },
    ]);
    expect(unavailableRows(rows, none)).toEqual([]);
  });

  it('the answered menu marks each product, and its ETag names the version and the snoozes in force', () => {
    const published = { version: 3, source: 'register' as const, publishedAt: now };
    const snoozed = snoozedAt(
      [{ productId: 'sku-fries', until: new Date('2026-11-21T18:00:00.000Z'), reason: 'sold out' }],
      now,
    );
    const view = menuView(SAMPLE_MENU, published, snoozed);
    expect(view).toMatchObject({ version: 3, source: 'register', publishedAt: now.toISOString(), currency: 'EUR' });
    expect(view.items[1]).toEqual({
      ...SAMPLE_MENU.items[1],
      available: false,
      unavailableUntil: '2026-11-21T18:00:00.000Z',
      unavailableReason: 'sold out',
    });
    expect(view.items[0]!.available).toBe(true);
    expect(JSON.stringify(view)).not.toContain('null');

    expect(menuEtag(3, none)).toBe('"3"');
    const tag = menuEtag(3, snoozed);
    expect(tag).toMatch(/^"3-[A-Za-z0-9_-]{12}"$/);
    expect(
      menuEtag(
        3,
        snoozedAt([{ productId: 'sku-fries', until: new Date('2026-11-21T18:00:00.000Z'), reason: 'sold out' }], now),
      ),
    ).toBe(tag);
    expect(menuEtag(3, snoozedAt([{ productId: 'sku-fries', reason: 'sold out' }], now))).not.toBe(tag);
    expect([
      versionOfEtag(tag),
      versionOfEtag('"3"'),
      versionOfEtag('W/"12"'),
      versionOfEtag('3'),
      versionOfEtag('"x"'),
    ]).toEqual([3, 3, 12, undefined, undefined]);
  });
});

describe('menu events', () => {
  it('map to menu.published once per version and menu.item_availability_changed once per change', () => {
    const published = webhooksOf({
      type: 'menu',
      version: 4,
      source: 'operator',
      counts: { items: 3, modifierGroups: 2, options: 4 },
    });
    expect(published).toEqual([
      {
        type: 'menu.published',
        eventKey: 'menu.4.menu.published',
        data: { version: 4, source: 'operator', counts: { items: 3, modifierGroups: 2, options: 4 } },
      },
    ]);
    const snoozed = webhooksOf({
      type: 'menu-availability',
      productId: 'sku-fries',
      available: false,
      until: '2026-11-21T18:00:00.000Z',
      reason: 'sold out',
      at: 1,
    });
    expect(snoozed).toEqual([
      {
        type: 'menu.item_availability_changed',
        eventKey: 'menu.availability.sku-fries.1.menu.item_availability_changed',
        data: { productId: 'sku-fries', available: false, until: '2026-11-21T18:00:00.000Z', reason: 'sold out' },
      },
    ]);
    expect(
      webhooksOf({ type: 'menu-availability', productId: 'sku-fries', available: true, at: 2 })[0]!.eventKey,
    ).not.toBe(snoozed[0]!.eventKey);
  });
});
