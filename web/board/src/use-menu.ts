/**
 * The location's menu on the board, for its snoozes (docs/menu.md): read at sign-in, every
 * MENU_READ_MS (a snooze made elsewhere, or one ending by itself, comes as no stream event) and
 * after each snooze or lift made here.
 */
import type { MenuView } from '@pos/shared/domain/records';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { BoardApi } from './api';

const MENU_READ_MS = 30_000;

/** A product of the menu, item or option, with its availability now. */
export interface MenuProduct {
  productId: string;
  name: string;
  available: boolean;
  unavailableUntil?: string;
  unavailableReason?: string;
}

/** Every product of the menu once (an option of two groups, or an item sold as an option too, is one product). */
export function productsOf(menu: MenuView): MenuProduct[] {
  const products = new Map<string, MenuProduct>();
  for (const product of [...menu.items, ...menu.modifierGroups.flatMap((group) => group.options)]) {
    if (!products.has(product.productId)) products.set(product.productId, product);
  }
  return [...products.values()];
}

export function useMenu(api: BoardApi, fail: (err: unknown, what?: string) => void) {
  // undefined: not read yet; null: the location has no menu
  const [menu, setMenu] = useState<MenuView | null | undefined>(undefined);
  // the latest `fail` (a new one each render), without reading again for it
  const failed = useRef(fail);
  failed.current = fail;
  const read = useCallback(() => {
    api.readMenu().then(
      (read) => setMenu(read ?? null),
      (err: unknown) => failed.current(err, 'Could not read the menu'),
    );
  }, [api]);
  useEffect(() => {
    read();
    const timer = setInterval(read, MENU_READ_MS);
    return () => clearInterval(timer);
  }, [read]);
  return { menu, read };
}
