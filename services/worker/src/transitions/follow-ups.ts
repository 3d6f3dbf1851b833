import type { Queue } from 'bullmq';
import type { OrderDeadlinesConfig } from '@pos/shared/config';
import { locationOutbox } from '@pos/shared/events/outbox';
import type { Logger } from '@pos/shared/log';
import { addOrderDeadlines, type OrderDeadlineJob } from '@pos/shared/queue/order-deadlines';
import type { LocationsRepo } from '@pos/shared/store/locations';
import type { OrderFollowUps } from './context';

/**
 * The worker's follow-ups of order transitions: a placement's order deadline jobs, and the count of
 * failed orders in a row that pauses a location (PAUSE_AFTER_FAILED_ORDERS). Each is off, and
 * costs nothing, unless its setting is on (deadlines: unless ORDER_DEADLINE, ORDER_AUTO_ABORT_AFTER
 * or a location's own deadline is set; the location's is read once per placement).
 */
export function orderFollowUps(deps: {
  orderDeadlines: Queue<OrderDeadlineJob>;
  locations: Pick<LocationsRepo, 'orderDeadline' | 'noteFailedOrder' | 'resetFailedOrders'>;
  settings: OrderDeadlinesConfig;
  /** PAUSE_AFTER_FAILED_ORDERS (undefined: off). */
  pauseAfterFailedOrders: number | undefined;
  log: Logger;
}): OrderFollowUps {
  const { settings, locations } = deps;
  return {
    // Throws when the jobs could not be added: the job is run again, finds itself applied, and adds them then.
    placed: (order) =>
      addOrderDeadlines(deps.orderDeadlines, settings, order, () => locations.orderDeadline(order.locationId)),

    async applied(before, after, events) {
      const limit = deps.pauseAfterFailedOrders;
      if (limit === undefined || before.state === after.state) return;
      // The order's own write was guarded (once per transition); a count lost to a crash right
      // after it is not made up (the count only delays a pause).
      try {
        if (after.state === 'COMPLETED') await locations.resetFailedOrders(after.locationId);
        if (after.state !== 'FAILED') return;
        const now = new Date();
        const paused = await locations.noteFailedOrder(after.locationId, limit, now, (location) =>
          locationOutbox(location, 'paused', now),
        );
        if (!paused) return;
        deps.log.warn({ locationId: after.locationId, failedInRow: limit }, 'location paused after failed orders');
        await events.location(paused, 'paused');
      } catch (err) {
        deps.log.error({ err, locationId: after.locationId }, 'could not count the failed order');
      }
    },
  };
}
