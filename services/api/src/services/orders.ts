import { rowsReplacementConflict } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOrderRecord, type OrderRow, type WorkRecord } from '@pos/shared/domain/records';
import type { Logger } from '@pos/shared/log';
import type { HistoryPage, HistoryQuery, OrderArchiveRepo } from '@pos/shared/store/archive';
import { findOrder } from '@pos/shared/store/archive';
import type { OrderDoc } from '@pos/shared/store/documents';
import { guardedRetry, RACED } from '@pos/shared/store/guarded-retry';
import type { OrderScope, OrdersRepo } from '@pos/shared/store/orders';
import type { WorkRepo } from '@pos/shared/store/work';

/** Orders as registers, customers and operators read them, and a customer's rows. */
export class Orders {
  constructor(
    private readonly deps: {
      orders: Pick<OrdersRepo, 'find' | 'listByState' | 'replaceRows'>;
      archive: Pick<OrderArchiveRepo, 'find' | 'history'>;
      work: Pick<WorkRepo, 'list'>;
    },
  ) {}

  /** The register's work: PLACED orders by number, then live commands by number (one read). */
  async work(locationId: string): Promise<WorkRecord[]> {
    const { orders, commands } = await this.deps.work.list(locationId, new Date());
    return [...orders.map(toOrderRecord), ...commands.map(toCommandRecord)];
  }

  /** An order of the scope (a customer's: its own session's), wherever it is; a finished one may be archived. */
  async find(scope: OrderScope, number: number): Promise<OrderDoc> {
    const found = await findOrder(this.deps, scope, number);
    if (!found) throw new ProblemError(problems.orderNotFound());
    return found.order;
  }

  /** A customer's new rows for its SELECTING order, version-guarded; a lost race reads again. */
  async replaceRows(scope: OrderScope, number: number, rows: OrderRow[], log: Logger): Promise<OrderDoc> {
    return guardedRetry(async (attempt) => {
      const order = await this.find(scope, number);
      const conflict = rowsReplacementConflict(order);
      if (conflict) throw new ProblemError(problems.conflict(conflict));
      const updated = await this.deps.orders.replaceRows(order, rows, new Date());
      if (updated) {
        log.info({ orderNumber: number, rows: rows.length, version: updated.version }, 'order rows replaced');
        return updated;
      }
      log.debug({ orderNumber: number, attempt }, 'order changed since read; reading again');
      return RACED;
    });
  }

  listByState(...args: Parameters<OrdersRepo['listByState']>): ReturnType<OrdersRepo['listByState']> {
    return this.deps.orders.listByState(...args);
  }

  history(query: HistoryQuery): Promise<HistoryPage> {
    return this.deps.archive.history(query);
  }
}
