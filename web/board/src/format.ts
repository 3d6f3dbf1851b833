/** Words and numbers as the board shows them. */
import type { CommandRecord, OrderRecord } from '@pos/shared/domain/records';

/** "just now", "45 s", "12 min", "1 h 5 min": how long ago `iso` was, at `now`. */
export function age(iso: string | undefined, now: number): string {
  if (!iso) return '';
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (seconds < 10) return 'just now';
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** "0 min", "12 min", "75 min": a card's age in whole minutes, at `now`. */
export function ageInMinutes(iso: string | undefined, now: number): string {
  if (!iso) return '';
  return `${Math.max(0, Math.floor((now - Date.parse(iso)) / 60_000))} min`;
}

/** How urgent an order's wait is: fresh, waiting (over 10 min), late (over 20 min). */
export function urgency(iso: string | undefined, now: number): 'fresh' | 'waiting' | 'late' {
  const minutes = iso ? (now - Date.parse(iso)) / 60_000 : 0;
  return minutes >= 20 ? 'late' : minutes >= 10 ? 'waiting' : 'fresh';
}

/** The clock time of `iso`, as the device shows times. */
export function clock(iso: string | undefined): string {
  return iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '';
}

export function tableLabel(tableNumber: number | undefined): string {
  return tableNumber === undefined ? 'Takeout' : `Table ${tableNumber}`;
}

/** What a command asks for (the kind is carried by its fields: docs/register-interface.md, part 2.2). */
export function commandLabel(command: CommandRecord): string {
  if (command.paymentNumber !== undefined) return 'Bill requested';
  if (command.readTableState) return 'Read table state';
  if (command.exportMainData) return 'Export data';
  return 'Command';
}

/** What the live region says of an order new to the board (PLACED) or newly FAILED. */
export function orderArrival(order: Pick<OrderRecord, 'number' | 'state' | 'tableNumber'>): string {
  return order.state === 'FAILED'
    ? `Order ${order.number} failed`
    : `New order ${order.number}, ${tableLabel(order.tableNumber)}`;
}

/** What the live region says of a command new to the board. */
export function commandArrival(command: CommandRecord): string {
  return `${commandLabel(command)}, ${tableLabel(command.tableNumber)}`;
}
