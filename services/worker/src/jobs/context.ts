import type { Logger } from '../../../../shared/src/log';
import type { EventPublisher } from '../../../../shared/src/events/location-events';
import type { OrdersRepo } from '../../../../shared/src/store/orders';
import type { SessionsRepo } from '../../../../shared/src/store/sessions';

/** What a job handler may touch. */
export interface JobContext {
  jobId: string;
  log: Logger;
  orders: OrdersRepo;
  sessions: SessionsRepo;
  /** The location's failure threshold (fixed at the location's creation, so cached). */
  failureThreshold(locationId: string): Promise<number>;
  events: EventPublisher;
  /** Test-only crash points around the MongoDB write (FAULT_INJECT). */
  checkpoint(point: 'before-apply' | 'after-apply'): void;
}
