import { LRUCache } from 'lru-cache';
import type { OrderDoc } from '@pos/shared/store/documents';
import { recordId } from '@pos/shared/store/mongo';
import type { OrderScope } from '@pos/shared/store/orders';

/** Orders a worker keeps: far more than it changes within a few minutes. */
const MAX_ORDERS = 10_000;

/**
 * The orders this worker read or wrote last, as it read or wrote them. A cached order is only a
 * guess at the current one (another worker may have written since): a job acts on it only through
 * a version-guarded write, which fails if the guess was wrong; any other decision (unchanged,
 * conflict, already applied) is made again on a fresh read. So a job that changes an order this
 * worker knows costs one MongoDB command (the write) instead of two. (A customer's finish or
 * submit still reads its session first: a cached order was read before that, as the session
 * close needs; one the close fenced since fails its version guard.)
 */
export class OrderCache {
  private readonly orders = new LRUCache<string, OrderDoc>({ max: MAX_ORDERS });

  /** The cached order, when it is one the scope may act on (a customer, only its own). */
  get(scope: OrderScope, number: number): OrderDoc | undefined {
    const order = this.orders.get(recordId(scope.locationId, number));
    if (!order || (scope.sessionId !== undefined && order.sessionId !== scope.sessionId)) return undefined;
    return order;
  }

  set(order: OrderDoc): void {
    this.orders.set(order._id, order);
  }

  forget(order: OrderDoc): void {
    this.orders.delete(order._id);
  }
}
