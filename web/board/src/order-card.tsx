import type { ComponentChildren } from 'preact';
import type { BoardOrder } from './board-state';
import { ageInMinutes, clock, tableLabel, urgency } from './format';

/**
 * The rows a card shows at first: a long order keeps its card (and the
 * cards after it) on screen; the rest open on a tap.
 */
export const CARD_ROWS = 8;

type Row = BoardOrder['rows'][number];

const rowItem = (row: Row) => (
  <li key={row.rowNumber}>
    <span class="qty">{row.quantity}×</span> {row.name}
    {row.notes && <span class="notes">{row.notes}</span>}
  </li>
);

export interface OrderCardProps {
  order: BoardOrder;
  now: number;
  operator: boolean;
  /** The card's actions. */
  children: ComponentChildren;
}

/** An open or failed order: its table, how long it has waited, its rows and its actions. */
export function OrderCard({ order, now, operator, children }: OrderCardProps) {
  const id = `order-${order.number}-${order.state}`;
  const since = order.state === 'FAILED' ? order.failedTime : order.orderTime;
  // Operators see the count; the register interface tells a kitchen only that it failed before.
  const failures = operator
    ? (order.failureCount ?? 0) > 0 && `Failed ${order.failureCount}×`
    : order.failedTime !== undefined && (order.state === 'FAILED' ? 'Failed' : 'Failed before');
  return (
    <article
      class={`card order ${urgency(order.state === 'PLACED' ? order.orderTime : undefined, now)}${order.overdue ? ' overdue' : ''}`}
      aria-labelledby={id}
    >
      <header>
        <h3 id={id}>
          Order {order.number} <span class="sub">{tableLabel(order.tableNumber)}</span>
        </h3>
        {since && (
          <time dateTime={since} title={clock(since)}>
            {ageInMinutes(since, now)}
          </time>
        )}
      </header>
      {/* operators only: past the location's order deadline */}
      {order.overdue && order.state === 'PLACED' && <p class="overdue-mark">Overdue</p>}
      {failures && <p class="failures">{failures}</p>}
      <ul class="rows">{order.rows.slice(0, CARD_ROWS).map(rowItem)}</ul>
      {order.rows.length > CARD_ROWS && (
        <details class="more-rows">
          <summary>
            {order.rows.length - CARD_ROWS} more {order.rows.length - CARD_ROWS === 1 ? 'row' : 'rows'}
          </summary>
          <ul class="rows">{order.rows.slice(CARD_ROWS).map(rowItem)}</ul>
        </details>
      )}
      <div class="actions">{children}</div>
    </article>
  );
}
