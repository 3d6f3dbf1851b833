import type { Logger } from '@pos/shared/log';
import type { EventPublisher } from '@pos/shared/events/location-events';
import type { OrderArchiveRepo } from '@pos/shared/store/archive';
import type { OrdersRepo } from '@pos/shared/store/orders';
import type { SessionsRepo } from '@pos/shared/store/sessions';
import type { CrashPoint } from '../fault-injection';
import type { OrderCache } from './order-cache';

/** What a job handler may touch: of each repository, the few calls the handlers make. */
export interface JobContext {
  jobId: string;
  /** This job ran before and answered 200 (see AnsweredJobs): it reports the order as it is now and changes nothing. */
  answered: boolean;
  log: Logger;
  orders: Pick<OrdersRepo, 'find' | 'applyChange' | 'touchOpenOfSession' | 'placedOfSession'>;
  /** Where finished orders go; read only when the hot collection misses. */
  archive: Pick<OrderArchiveRepo, 'find'>;
  /** This worker's last reads and writes of orders (see OrderCache). */
  orderCache: OrderCache;
  sessions: Pick<SessionsRepo, 'find' | 'isOpen' | 'close'>;
  /** The location's failure threshold, as it is now (an admin may change it). */
  failureThreshold(locationId: string): Promise<number>;
  events: EventPublisher;
  /** Test-only crash points around the MongoDB write and the answer (FAULT_INJECT). */
  checkpoint(point: CrashPoint): void;
}
