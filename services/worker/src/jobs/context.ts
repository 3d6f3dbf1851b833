import type { Logger } from '@pos/shared/log';
import type { EventPublisher } from '@pos/shared/events/location-events';
import type { OrdersRepo } from '@pos/shared/store/orders';
import type { SessionsRepo } from '@pos/shared/store/sessions';
import type { OrderCache } from './order-cache';

/** What a job handler may touch. */
export interface JobContext {
  jobId: string;
  log: Logger;
  orders: OrdersRepo;
  /** This worker's last reads and writes of orders (see OrderCache). */
  orderCache: OrderCache;
  sessions: SessionsRepo;
  /** The location's failure threshold (fixed at the location's creation, so cached). */
  failureThreshold(locationId: string): Promise<number>;
  events: EventPublisher;
  /** Test-only crash points around the MongoDB write (FAULT_INJECT). */
  checkpoint(point: 'before-apply' | 'after-apply'): void;
}
