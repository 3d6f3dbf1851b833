import type { Logger } from '@pos/shared/log';
import type { Announcer } from '@pos/shared/events/announcements';
import type { OrderArchiveRepo } from '@pos/shared/store/archive';
import type { OrdersRepo } from '@pos/shared/store/orders';
import type { SessionsRepo } from '@pos/shared/store/sessions';
import type { OrderDoc } from '@pos/shared/store/documents';
import type { CrashPoint } from '../fault-injection';
import type { OrderWriter } from '../outbox/order-writer';
import type { OrderCache } from './order-cache';

/** What follows an applied order transition, besides its announcement (presence-and-deadlines). */
export interface OrderFollowUps {
  /**
   * The order is PLACED in a new placement (or found so on a re-run): its
   * order deadline jobs are added; safe to repeat.
   */
  placed(order: OrderDoc): Promise<void>;
  /**
   * A transition was applied: FAILED and COMPLETED orders counted for
   * PAUSE_AFTER_FAILED_ORDERS (a pause is announced through `announcer`).
   */
  applied(before: OrderDoc, after: OrderDoc, announcer: Announcer): Promise<void>;
}

/** Follow-ups that do nothing: for contexts (tests, tools) where no order deadline or pause applies. */
export const NO_FOLLOW_UPS: OrderFollowUps = { placed: () => Promise.resolve(), applied: () => Promise.resolve() };

/** What a job handler may touch: of each repository, the few calls the handlers make. */
export interface JobContext {
  jobId: string;
  /**
   * This job ran before and answered 200 (see AnsweredJobs): it reports the order as it is now and changes nothing.
   */
  answered: boolean;
  /** This job started before (BullMQ runs it again after a crash or a failed attempt): that run may have written. */
  runBefore: boolean;
  log: Logger;
  orders: Pick<OrdersRepo, 'find' | 'appliedEver' | 'touchOpenOfSession' | 'placedOfSession'>;
  /** Where finished orders go; read only when the hot collection misses. */
  archive: Pick<OrderArchiveRepo, 'find'>;
  /** This worker's last reads and writes of orders (see OrderCache). */
  orderCache: OrderCache;
  /** The one write of an order transition, with its events (see OrderWriter). */
  writer: Pick<OrderWriter, 'write'>;
  sessions: Pick<SessionsRepo, 'find' | 'isOpen' | 'close'>;
  /** The location's failure threshold, as it is now (an admin may change it). */
  failureThreshold(locationId: string): Promise<number>;
  /** Announcements held for the job's reply, and sent with it (JobMessages). */
  announcer: Announcer;
  /**
   * What every API node must have heard before the job answers (a session's change): published at
   * once, not held. Held, it would share the reply's pipeline, and Redis may write the reply to its
   * node first.
   */
  nodes: Pick<Announcer, 'sessionChanged'>;
  followUps: OrderFollowUps;
  /** Test-only crash points around the MongoDB write and the answer (FAULT_INJECT). */
  checkpoint(point: CrashPoint): void;
}
