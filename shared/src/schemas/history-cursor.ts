/**
 * The order history's cursor (GET /admin/v1/locations/{id}/history): opaque to clients,
 * `<completeTime ms>.<number>` in base64url. Apart from the query's schema (history.ts), so that a
 * client pages the history without compiling any schema.
 */
import type { OrderRecord } from '../domain/records';
import type { HistoryCursor } from '../store/archive';

export function encodeHistoryCursor(cursor: HistoryCursor): string {
  return Buffer.from(`${cursor.completeTime.getTime()}.${cursor.number}`).toString('base64url');
}

/** The cursor after an order of the history (a finished order has its `completeTime`). */
export function historyCursorOf(order: OrderRecord): string {
  return encodeHistoryCursor({ completeTime: new Date(order.completeTime ?? 0), number: order.number });
}

export function decodeHistoryCursor(text: string): HistoryCursor | undefined {
  const match = /^([0-9]{1,15})\.([0-9]{1,10})$/.exec(Buffer.from(text, 'base64url').toString());
  return match ? { completeTime: new Date(Number(match[1])), number: Number(match[2]) } : undefined;
}
