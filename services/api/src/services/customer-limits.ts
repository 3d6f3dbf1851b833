import { limitReached, ProblemError, problems } from '@pos/shared/domain/problem';
import type { CommandsRepo } from '@pos/shared/store/commands';
import type { OrdersRepo } from '@pos/shared/store/orders';
import type { SessionDoc } from '@pos/shared/store/documents';

/**
 * A customer at the cap of open orders gets out of it when the kitchen completes (or aborts) one,
 * or when an unsubmitted one expires; a minute is a fair time to come back.
 */
const OPEN_ORDERS_RETRY_AFTER_S = 60;

export interface CustomerLimitsOptions {
  orders: Pick<OrdersRepo, 'countOpen'>;
  commands: Pick<CommandsRepo, 'liveOfSession'>;
  /** CUSTOMER_MAX_OPEN_ORDERS: open orders (SELECTING, NEW, PLACED, FAILED) per session. */
  maxOpenOrders: number;
  /** CUSTOMER_MAX_COMMANDS: live commands per session. */
  maxCommands: number;
}

/**
 * What a customer session may create: orders and commands for its own table only, and no more
 * than its caps (a 429 with Retry-After beyond them). A count and the creation it allows run
 * one at a time per session on this node, so a burst of one session's requests cannot pass the
 * count together; across N nodes such a burst can exceed a cap by at most N - 1.
 */
export class CustomerLimits {
  /** Per session, the end of the last count-and-create admitted on this node. */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly options: CustomerLimitsOptions) {}

  /**
   * The table an order or command of this session is for: the session's. A body may repeat it;
   * naming another table (or any, for a session without one) is a 400.
   */
  tableOf(session: SessionDoc, requested: number | undefined): number | undefined {
    if (requested !== undefined && requested !== session.tableNumber) {
      const detail =
        session.tableNumber === undefined
          ? 'tableNumber cannot be given: this session has no table'
          : `tableNumber must be this session's table (${session.tableNumber})`;
      throw new ProblemError(problems.illegalArgument(detail));
    }
    return session.tableNumber;
  }

  /**
   * Runs `create` (a new SELECTING order) if the session is under CUSTOMER_MAX_OPEN_ORDERS. Every
   * order not yet finished counts: finishing and submitting one moves it on the registers, it does
   * not free a place, so a create/finish/submit loop cannot flood a kitchen.
   */
  openOrder<T>(session: SessionDoc, create: () => Promise<T>): Promise<T> {
    const { orders, maxOpenOrders } = this.options;
    return this.serially(session._id, async () => {
      if ((await orders.countOpen(session.locationId, session._id)) >= maxOpenOrders) {
        throw limitReached(
          `This session already has ${maxOpenOrders} open orders; another ` +
            'can be opened once one is completed or aborted',
          OPEN_ORDERS_RETRY_AFTER_S,
        );
      }
      return create();
    });
  }

  /** Runs `create` (a new command) if the session has fewer than CUSTOMER_MAX_COMMANDS live ones. */
  command<T>(session: SessionDoc, create: () => Promise<T>): Promise<T> {
    const { commands, maxCommands } = this.options;
    return this.serially(session._id, async () => {
      const now = new Date();
      const live = await commands.liveOfSession(session.locationId, session._id, now, maxCommands);
      if (live.length >= maxCommands) {
        // A place frees when the oldest is acknowledged, at the latest when it expires.
        const wait = (Math.min(...live.map((command) => command.expiresAt.getTime())) - now.getTime()) / 1000;
        throw limitReached(`This session already has ${maxCommands} commands waiting for the register`, wait);
      }
      return create();
    });
  }

  private serially<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    const run = (this.tails.get(sessionId) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => undefined);
    this.tails.set(sessionId, tail);
    void tail.then(() => {
      if (this.tails.get(sessionId) === tail) this.tails.delete(sessionId);
    });
    return run;
  }
}
