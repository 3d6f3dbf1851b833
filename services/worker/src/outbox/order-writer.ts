/**
 * The one way an order transition is written with its events, whoever holds the relay's lease.
 * The transition's code calls `write` (and `found` when a run again finds its write landed); how
 * the events travel is decided here alone: a worker that relays takes them over from the outbox
 * and hands them to its relay (TakenEvents: one write of the order per change), any other leaves
 * them to the relay. Either way they are in the order, in the same write as the change, and the
 * relay records them exactly once (docs/webhooks.md#deliveries).
 */
import type { OrderChange } from '@pos/shared/domain/order-state';
import { orderOutbox } from '@pos/shared/events/outbox';
import type { OrderDoc } from '@pos/shared/store/documents';
import type { OrdersRepo } from '@pos/shared/store/orders';
import type { TakenEvents } from './taken-events';

export class OrderWriter {
  constructor(
    private readonly orders: Pick<OrdersRepo, 'applyChange'>,
    private readonly taken: Pick<TakenEvents, 'takeOver' | 'take'>,
  ) {}

  /** Writes `change` if nobody wrote `order` since it was read, with its events; null when the version moved on. */
  async write(order: OrderDoc, change: OrderChange, jobId: string, now: Date): Promise<OrderDoc | null> {
    const updated = await this.orders.applyChange(order, change, jobId, now, (after) => orderOutbox(after, now), this.taken.takeOver(order));
    if (updated) this.taken.take(updated);
    return updated;
  }

  /** A run again found this job's write: its events are handed on again (the run that wrote may have died first). */
  found(order: OrderDoc): void {
    this.taken.take(order);
  }
}
