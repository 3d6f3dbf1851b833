/**
 * The one way an order transition is written: the change and its events in one version-guarded
 * write, the events in the order's outbox for the relay (relay.ts), which records them exactly
 * once (docs/webhooks.md#deliveries).
 */
import type { OrderChange } from '@pos/shared/domain/order-state';
import { orderOutbox } from '@pos/shared/events/outbox';
import type { OrderDoc } from '@pos/shared/store/documents';
import type { OrdersRepo } from '@pos/shared/store/orders';

export class OrderWriter {
  constructor(private readonly orders: Pick<OrdersRepo, 'applyChange'>) {}

  /** Writes `change` if nobody wrote `order` since it was read, with its events; null when the version moved on. */
  write(order: OrderDoc, change: OrderChange, jobId: string, now: Date): Promise<OrderDoc | null> {
    return this.orders.applyChange(order, change, jobId, now, (after) => orderOutbox(after, now));
  }
}
