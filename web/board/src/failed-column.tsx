import type { BoardOrder } from './board-state';
import { Column } from './column';
import { OrderCard } from './order-card';

export interface FailedColumnProps {
  /** The FAILED orders, oldest first (a kitchen sees only those it saw fail). */
  orders: BoardOrder[];
  now: number;
  operator: boolean;
  /** False for a viewer: no Recover. */
  canAct: boolean;
  busy: ReadonlySet<string>;
  onRecover(order: BoardOrder): void;
}

/** Failed orders: operators recover them; a kitchen waits for an operator. */
export function FailedColumn({ orders, now, operator, canAct, busy, onRecover }: FailedColumnProps) {
  return (
    <Column name="failed" title="Failed" count={String(orders.length)}>
      {orders.length === 0 ? (
        <p class="empty">{operator ? 'No failed orders.' : 'No failed orders seen.'}</p>
      ) : (
        <ul class="list" role="list">
          {orders.map((order) => (
            <li key={order.number}>
              <OrderCard order={order} now={now} operator={operator}>
                {operator && canAct ? (
                  <button
                    type="button"
                    class="primary"
                    aria-label={`Recover order ${order.number}`}
                    disabled={busy.has(`order-${order.number}`)}
                    onClick={() => onRecover(order)}
                  >
                    Recover
                  </button>
                ) : (
                  <p class="note">{operator ? 'Waiting for a manager' : 'Waiting for an operator'}</p>
                )}
              </OrderCard>
            </li>
          ))}
        </ul>
      )}
    </Column>
  );
}
