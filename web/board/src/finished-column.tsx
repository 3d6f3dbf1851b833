import type { FinishedOrder } from './board-state';
import { Column } from './column';
import { clock, tableLabel } from './format';

/** The last orders seen finishing, newest first, fading out. */
export function FinishedColumn({ finished }: { finished: readonly FinishedOrder[] }) {
  return (
    <Column name="finished" title="Finished">
      {finished.length === 0 ? (
        <p class="empty">Nothing finished yet.</p>
      ) : (
        <ul class="list finished" role="list">
          {finished.map(({ order }) => (
            <li key={order.number} class="fading" data-state={order.state}>
              <span class="number">Order {order.number}</span> <span class="sub">{tableLabel(order.tableNumber)}</span>{' '}
              <span class="outcome">{order.state === 'COMPLETED' ? 'Completed' : 'Aborted'}</span>{' '}
              <time dateTime={order.completeTime}>{clock(order.completeTime)}</time>
            </li>
          ))}
        </ul>
      )}
    </Column>
  );
}
