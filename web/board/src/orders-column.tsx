import type { BoardOrder } from './board-state';
import { Column } from './column';
import { OrderCard } from './order-card';

export interface OrdersColumnProps {
  /** The PLACED orders, oldest first. */
  orders: BoardOrder[];
  now: number;
  operator: boolean;
  /** False for a viewer: the orders are shown without Complete and Abort. */
  canAct: boolean;
  /** Keys of the actions under way (`order-<number>`). */
  busy: ReadonlySet<string>;
  /** The order whose Abort waits for its confirmation. */
  confirming: number | undefined;
  onComplete(order: BoardOrder): void;
  /** The first press asks for confirmation; the second aborts. */
  onAbort(order: BoardOrder): void;
}

/** The open orders, each with Complete and Abort. */
export function OrdersColumn({
  orders,
  now,
  operator,
  canAct,
  busy,
  confirming,
  onComplete,
  onAbort,
}: OrdersColumnProps) {
  return (
    <Column name="orders" title="Orders" count={`${orders.length} open`} class="orders">
      {orders.length === 0 ? (
        <p class="empty">No open orders.</p>
      ) : (
        <ul class="cards" role="list">
          {orders.map((order) => (
            <li key={order.number}>
              <OrderCard order={order} now={now} operator={operator}>
                {canAct && (
                  <>
                    <button
                      type="button"
                      class="primary"
                      aria-label={`Complete order ${order.number}`}
                      disabled={busy.has(`order-${order.number}`)}
                      onClick={() => onComplete(order)}
                    >
                      Complete
                    </button>
                    <button
                      type="button"
                      class={confirming === order.number ? 'danger confirming' : 'danger'}
                      aria-label={
                        confirming === order.number
                          ? `Confirm abort of order ${order.number}`
                          : `Abort order ${order.number}`
                      }
                      disabled={busy.has(`order-${order.number}`)}
                      onClick={() => onAbort(order)}
                    >
                      {confirming === order.number ? 'Confirm abort' : 'Abort'}
                    </button>
                  </>
                )}
              </OrderCard>
            </li>
          ))}
        </ul>
      )}
    </Column>
  );
}
