/**
 * An order's rows by its location's rules (docs/menu.md): at a location with a menu, rows name a
 * product and the service names and prices them from the menu; at one without, rows are taken as
 * the app sends them (`name` and `unitPrice` required, as customer apps of 0.5.0 send them).
 * The body is checked when read; its rows are priced when asked, after the other refusals.
 */
import type { OrderRow } from '@pos/shared/domain/records';
import { menuValidators } from '@pos/shared/schemas/menu';
import { validators } from '@pos/shared/schemas/requests';
import type { AppContext } from '../context';
import { bodyOf } from '../middleware/json-body';
import type { MenuHolder, Menus } from '../services/menus';
import { numberRows } from '../services/new-work';

export interface Cart {
  tableNumber?: number;
  /** The rows as stored: priced, or a 422 `Menu mismatch`. */
  rows: () => Promise<OrderRow[]>;
}

/** A new order's body. `sellUnavailable`: an operator's counter order may sell a snoozed product. */
export function orderCart(
  ctx: AppContext,
  menus: Pick<Menus, 'price'>,
  location: MenuHolder | null,
  sellUnavailable = false,
): Cart {
  if (!location?.menu) {
    const input = bodyOf(ctx, validators.order);
    return { tableNumber: input.tableNumber, rows: () => Promise.resolve(numberRows(input.rows)) };
  }
  const input = bodyOf(ctx, menuValidators.order);
  return { tableNumber: input.tableNumber, rows: () => menus.price(location, input.rows, sellUnavailable) };
}

/** A body of new rows for an order being selected. */
export function rowsCart(ctx: AppContext, menus: Pick<Menus, 'price'>, location: MenuHolder | null): Cart['rows'] {
  if (!location?.menu) {
    const rows = numberRows(bodyOf(ctx, validators.rows).rows);
    return () => Promise.resolve(rows);
  }
  const { rows } = bodyOf(ctx, menuValidators.rows);
  return () => menus.price(location, rows);
}
