/**
 * The menu's rules, as pure functions over data (docs/menu.md): whether a menu document is valid
 * (every error with its JSON pointer), a menu indexed for pricing, what is available at an
 * instant, and a cart priced from a menu (priced rows, or every mismatch with its code).
 */
import { createHash } from 'node:crypto';
import type { OrderRow } from '../schemas/responses';
import type { MenuDocument, MenuError, MenuRowInput, MenuView } from '../schemas/menu';
import type { MenuCounts, Published, Snooze } from './menu-types';

export type { MenuCounts, MenuDocument, MenuError, Published, Snooze };

/** MENU_MAX_ITEMS, MENU_MAX_GROUPS, MENU_MAX_OPTIONS. */
export interface MenuLimits {
  items: number;
  groups: number;
  options: number;
}

type Item = MenuDocument['items'][number];
type Group = NonNullable<MenuDocument['modifierGroups']>[number];
type Option = Group['options'][number];

export function countsOf(menu: MenuDocument): MenuCounts {
  const groups = menu.modifierGroups ?? [];
  return {
    items: menu.items.length,
    modifierGroups: groups.length,
    options: groups.reduce((sum, group) => sum + group.options.length, 0),
  };
}

/** The first place each value was seen, and an error for each later one (entries without a key are passed over). */
function duplicates(
  list: readonly unknown[],
  keyOf: (entry: unknown) => unknown,
  pointer: (index: number) => string,
  what: string,
): MenuError[] {
  const first = new Map<string, number>();
  const errors: MenuError[] = [];
  list.forEach((entry, index) => {
    const key = keyOf(entry);
    if (typeof key !== 'string') return;
    const seen = first.get(key);
    if (seen === undefined) first.set(key, index);
    else errors.push({ pointer: pointer(index), detail: `duplicates the ${what} at ${pointer(seen)}` });
  });
  return errors;
}

const listAt = (value: unknown, key: string): unknown[] => {
  const found = fieldAt(value, key);
  return Array.isArray(found) ? found : [];
};
const fieldAt = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;

/**
 * The rules of a menu its shape does not say (schemas/menu.ts checks the shape): its sizes,
 * unique product and group ids, groups referenced and defined, `min` not over `max`. Every error,
 * each with its pointer; none for a valid menu. Read leniently, so that a body whose shape is
 * wrong too gets these errors with the shape's: what a rule needs and does not find, it passes over.
 */
export function menuErrors(menu: unknown, limits: MenuLimits): MenuError[] {
  const items = listAt(menu, 'items');
  const groups = listAt(menu, 'modifierGroups');
  const errors: MenuError[] = [];
  if (items.length > limits.items)
    errors.push({ pointer: '/items', detail: `has ${items.length} items; a menu holds at most ${limits.items}` });
  if (groups.length > limits.groups)
    errors.push({
      pointer: '/modifierGroups',
      detail: `has ${groups.length} groups; a menu holds at most ${limits.groups}`,
    });
  errors.push(
    ...duplicates(
      items,
      (item) => fieldAt(item, 'productId'),
      (i) => `/items/${i}/productId`,
      'productId',
    ),
  );
  errors.push(
    ...duplicates(
      groups,
      (group) => fieldAt(group, 'id'),
      (i) => `/modifierGroups/${i}/id`,
      'group id',
    ),
  );
  const defined = new Set(groups.map((group) => fieldAt(group, 'id')));
  items.forEach((item, i) =>
    listAt(item, 'modifierGroupIds').forEach((id, k) => {
      if (typeof id === 'string' && !defined.has(id))
        errors.push({
          pointer: `/items/${i}/modifierGroupIds/${k}`,
          detail: 'names a modifier group the menu does not define',
        });
    }),
  );
  groups.forEach((group, g) => {
    const options = listAt(group, 'options');
    const [min, max] = [fieldAt(group, 'min'), fieldAt(group, 'max')];
    if (options.length > limits.options)
      errors.push({
        pointer: `/modifierGroups/${g}/options`,
        detail: `has ${options.length} options; a group holds at most ${limits.options}`,
      });
    if (typeof min === 'number' && typeof max === 'number' && min > max)
      errors.push({ pointer: `/modifierGroups/${g}/min`, detail: `is over max (${max})` });
    errors.push(
      ...duplicates(
        options,
        (option) => fieldAt(option, 'productId'),
        (o) => `/modifierGroups/${g}/options/${o}/productId`,
        'option',
      ),
    );
  });
  return errors;
}

/** A menu's id: the hash of its document (so a menu published to many locations is stored once). */
export function menuIdOf(menu: MenuDocument): string {
  return createHash('sha256').update(JSON.stringify(menu)).digest('base64url');
}

/** The snoozes in force at `now` (one whose `until` has come has ended, written or not), by product. */
export function snoozedAt(snoozes: readonly Snooze[] | undefined, now: Date): Map<string, Snooze> {
  const active = new Map<string, Snooze>();
  for (const snooze of snoozes ?? []) if (!snooze.until || snooze.until > now) active.set(snooze.productId, snooze);
  return active;
}

/** The menu as the pricing reads it: items by product, each item's options by product. */
export interface PricedMenu {
  items: Map<string, Item>;
  /** Per item: its groups, and each option of them with the group it belongs to (the first, if in two). */
  choices: Map<string, { groups: Group[]; options: Map<string, { option: Option; group: Group }> }>;
  /** Every product of the menu, item or option. */
  products: Set<string>;
}

export function priceIndex(menu: MenuDocument): PricedMenu {
  const groups = new Map((menu.modifierGroups ?? []).map((group) => [group.id, group]));
  const items = new Map(menu.items.map((item) => [item.productId, item]));
  const products = new Set(items.keys());
  const choices: PricedMenu['choices'] = new Map();
  for (const group of groups.values()) for (const option of group.options) products.add(option.productId);
  for (const item of menu.items) {
    const itemGroups = (item.modifierGroupIds ?? [])
      .map((id) => groups.get(id))
      .filter((group): group is Group => group !== undefined);
    const options = new Map<string, { option: Option; group: Group }>();
    for (const group of itemGroups)
      for (const option of group.options)
        if (!options.has(option.productId)) options.set(option.productId, { option, group });
    choices.set(item.productId, { groups: itemGroups, options });
  }
  return { items, choices, products };
}

export type MismatchCode =
  'product_not_found' | 'product_unavailable' | 'price_mismatch' | 'modifier_not_found' | 'modifier_count';

/** One reason a cart does not fit the menu: its row (from 1), the product, a code and words. */
export interface Mismatch {
  row: number;
  productId: string;
  code: MismatchCode;
  detail: string;
}

export type PricedRows = { rows: OrderRow[] } | { mismatches: Mismatch[] };

export interface PricingOptions {
  /** The snoozes in force (snoozedAt). */
  snoozed: Map<string, Snooze>;
  /** An operator's counter order may sell a snoozed product (the counter sees the kitchen). */
  sellUnavailable?: boolean;
}

const unavailable = (row: number, productId: string, snooze: Snooze): Mismatch => ({
  row,
  productId,
  code: 'product_unavailable',
  detail: `${productId} is unavailable${snooze.until ? ` until ${snooze.until.toISOString()}` : ''}`,
});

/** One row's modifiers, priced; its mismatches are pushed to `out`. */
function priceModifiers(
  input: MenuRowInput,
  row: number,
  menu: PricedMenu,
  options: PricingOptions,
  out: Mismatch[],
): OrderRow['modifiers'] {
  const choice = menu.choices.get(input.productId)!;
  const taken = new Map<Group, number>();
  const priced: NonNullable<OrderRow['modifiers']> = [];
  for (const modifier of input.modifiers ?? []) {
    const found = choice.options.get(modifier.productId);
    if (!found) {
      out.push({
        row,
        productId: modifier.productId,
        code: 'modifier_not_found',
        detail: `${modifier.productId} is not an option of ${input.productId}`,
      });
      continue;
    }
    const snooze = options.snoozed.get(modifier.productId);
    if (snooze && !options.sellUnavailable) out.push(unavailable(row, modifier.productId, snooze));
    const quantity = modifier.quantity ?? 1;
    taken.set(found.group, (taken.get(found.group) ?? 0) + quantity);
    priced.push({
      productId: found.option.productId,
      name: found.option.name,
      quantity,
      unitPrice: found.option.price,
    });
  }
  for (const group of choice.groups) {
    const n = taken.get(group) ?? 0;
    if (n < group.min || n > group.max) {
      const range = group.min === group.max ? `${group.min}` : `${group.min} to ${group.max}`;
      out.push({
        row,
        productId: input.productId,
        code: 'modifier_count',
        detail: `${group.name} takes ${range} option(s); ${n} chosen`,
      });
    }
  }
  return priced.length > 0 ? priced : undefined;
}

/**
 * A cart priced from a menu: each row named and priced by the item (its `unitPrice` the item's
 * own price), each modifier by its option. A row's own `unitPrice` is the app's expectation: one
 * that differs is a mismatch, never changed silently. Every mismatch of every row, or the rows.
 */
export function priceRows(menu: PricedMenu, rows: readonly MenuRowInput[], options: PricingOptions): PricedRows {
  const mismatches: Mismatch[] = [];
  const priced: OrderRow[] = [];
  rows.forEach((input, index) => {
    const row = index + 1;
    const item = menu.items.get(input.productId);
    if (!item) {
      mismatches.push({
        row,
        productId: input.productId,
        code: 'product_not_found',
        detail: `${input.productId} is not on the menu`,
      });
      return;
    }
    const snooze = options.snoozed.get(item.productId);
    if (snooze && !options.sellUnavailable) mismatches.push(unavailable(row, item.productId, snooze));
    if (input.unitPrice !== undefined && input.unitPrice !== item.price) {
      mismatches.push({
        row,
        productId: item.productId,
        code: 'price_mismatch',
        detail: `${item.productId} costs ${item.price}, not ${input.unitPrice}`,
      });
    }
    const modifiers = priceModifiers(input, row, menu, options, mismatches);
    const out: OrderRow = {
      rowNumber: row,
      productId: item.productId,
      name: item.name,
      quantity: input.quantity,
      unitPrice: item.price,
    };
    if (input.notes !== undefined) out.notes = input.notes;
    if (modifiers) out.modifiers = modifiers;
    priced.push(out);
  });
  return mismatches.length > 0 ? { mismatches } : { rows: priced };
}

/** Rows already stored, checked again at submission: the mismatches of products snoozed since. */
export function unavailableRows(rows: readonly OrderRow[], snoozed: Map<string, Snooze>): Mismatch[] {
  const mismatches: Mismatch[] = [];
  for (const row of rows) {
    for (const productId of [row.productId, ...(row.modifiers ?? []).map((m) => m.productId)]) {
      const snooze = snoozed.get(productId);
      if (snooze) mismatches.push(unavailable(row.rowNumber, productId, snooze));
    }
  }
  return mismatches;
}

function availabilityOf(
  productId: string,
  snoozed: Map<string, Snooze>,
): { available: boolean; unavailableUntil?: string; unavailableReason?: string } {
  const snooze = snoozed.get(productId);
  if (!snooze) return { available: true };
  const view: { available: false; unavailableUntil?: string; unavailableReason?: string } = { available: false };
  if (snooze.until) view.unavailableUntil = snooze.until.toISOString();
  if (snooze.reason !== undefined) view.unavailableReason = snooze.reason;
  return view;
}

/** The menu as answered at an instant: the document, its version, and each product's availability. */
export function menuView(menu: MenuDocument, published: Published, snoozed: Map<string, Snooze>): MenuView {
  const view: MenuView = {
    version: published.version,
    source: published.source,
    publishedAt: published.publishedAt.toISOString(),
    items: [],
    modifierGroups: [],
  };
  if (menu.currency !== undefined) view.currency = menu.currency;
  view.items = menu.items.map((item) => ({ ...item, ...availabilityOf(item.productId, snoozed) }));
  view.modifierGroups = (menu.modifierGroups ?? []).map((group) => ({
    ...group,
    options: group.options.map((option) => ({ ...option, ...availabilityOf(option.productId, snoozed) })),
  }));
  return view;
}

/**
 * The ETag of a menu as answered: its version, and while products are snoozed a hash of the
 * snoozes in force (a snooze, its lift or its end changes the answer, not the version). The same
 * wherever that version is answered at that availability.
 */
export function menuEtag(version: number, snoozed: Map<string, Snooze>): string {
  if (snoozed.size === 0) return `"${version}"`;
  const hash = createHash('sha256');
  for (const snooze of [...snoozed.values()].sort((a, b) => (a.productId < b.productId ? -1 : 1))) {
    hash.update(`${snooze.productId}\n${snooze.until?.toISOString() ?? ''}\n${snooze.reason ?? ''}\n`);
  }
  return `"${version}-${hash.digest('base64url').slice(0, 12)}"`;
}

/** The version an ETag of menuEtag names (an `If-Match` compares versions), or undefined for another tag. */
export function versionOfEtag(etag: string): number | undefined {
  const match = /^(?:W\/)?"([0-9]{1,15})(?:-[A-Za-z0-9_-]+)?"$/.exec(etag.trim());
  return match ? Number(match[1]) : undefined;
}
