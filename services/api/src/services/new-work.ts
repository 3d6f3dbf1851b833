/**
 * New work for a location's registers: orders and commands, each under the next number of its
 * location's sequence, announced to its streams once stored (one created PLACED gets its deadline
 * jobs here too: no worker places it).
 */
import type { Queue } from 'bullmq';
import type { Counter } from 'prom-client';
import type { OrderDeadlinesConfig } from '@pos/shared/config';
import type { CommandKind } from '@pos/shared/domain/commands';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { OrderRow } from '@pos/shared/domain/records';
import type { Announcer } from '@pos/shared/events/announcements';
import { commandCreatedOutbox, orderOutbox } from '@pos/shared/events/outbox';
import type { Logger } from '@pos/shared/log';
import { addOrderDeadlines, type OrderDeadlineJob } from '@pos/shared/queue/order-deadlines';
import type { RowInput } from '@pos/shared/schemas/requests';
import type { CommandsRepo } from '@pos/shared/store/commands';
import type { CommandDoc, OrderDoc } from '@pos/shared/store/documents';
import type { LocationsRepo } from '@pos/shared/store/locations';
import type { OrdersRepo } from '@pos/shared/store/orders';
import { isDuplicateKey } from '@pos/shared/store/store-errors';

export interface NewWorkDeps {
  locations: Pick<LocationsRepo, 'nextNumber' | 'orderDeadline'>;
  orders: Pick<OrdersRepo, 'insert' | 'findCreatedBy'>;
  commands: Pick<CommandsRepo, 'insert' | 'findCreatedBy'>;
  announcer: Pick<Announcer, 'order' | 'command'>;
  orderDeadlines: Queue<OrderDeadlineJob>;
  orderDeadlineSettings: OrderDeadlinesConfig;
  /** COMMAND_TTL. */
  commandTtlMs: number;
  /** `pos_events_published_total`. */
  published: Counter<'type'>;
}

export interface OrderRequest {
  locationId: string;
  state: 'SELECTING' | 'PLACED';
  /** Numbered: as the app sent them (numberRows), or priced from the location's menu. */
  rows: OrderRow[];
  tableNumber?: number;
  userNumber?: number;
  sessionId?: string;
}

export interface CommandRequest {
  locationId: string;
  kind: CommandKind;
  tableNumber?: number;
  sessionId?: string;
}

/** Rows as stored: numbered from 1 in the order given. */
export function numberRows(rows: RowInput[]): OrderRow[] {
  return rows.map((row, index) => ({ rowNumber: index + 1, ...row }));
}

/** How often a create draws another number after its number turned out taken. */
const NUMBER_DRAWS = 3;

export class NewWork {
  constructor(private readonly deps: NewWorkDeps) {}

  /**
   * Creates an order; one created PLACED is announced to the location's streams at once (again,
   * for a retry that found its first attempt's order: that announcement may be the one lost).
   */
  async order(request: OrderRequest, log: Logger, idempotencyId?: string): Promise<OrderDoc> {
    const { deps } = this;
    const order = await this.insertNumbered(
      () => this.nextNumber(request.locationId, 'orderSeq'),
      (number) => {
        const now = new Date();
        return deps.orders.insert({ ...request, number, idempotencyId }, now, (order) => orderOutbox(order, now));
      },
      idempotencyId,
      (id) => deps.orders.findCreatedBy(request.locationId, id),
    );
    if (order.state === 'PLACED') {
      await this.announce(log, 'order', deps.announcer.order(order));
      // A counter order is placed here, not by the worker: its deadlines are added here (a retry adds none twice).
      await addOrderDeadlines(deps.orderDeadlines, deps.orderDeadlineSettings, order, () =>
        deps.locations.orderDeadline(order.locationId),
      ).catch((err: unknown) => log.warn({ err, orderNumber: order.number }, 'could not add the order deadlines'));
    }
    return order;
  }

  async command(request: CommandRequest, log: Logger, idempotencyId?: string): Promise<CommandDoc> {
    const { deps } = this;
    const command = await this.insertNumbered(
      () => this.nextNumber(request.locationId, 'commandSeq'),
      (number) =>
        deps.commands.insert(
          { ...request, number, idempotencyId },
          new Date(),
          deps.commandTtlMs,
          commandCreatedOutbox,
        ),
      idempotencyId,
      (id) => deps.commands.findCreatedBy(request.locationId, id),
    );
    await this.announce(log, 'command', deps.announcer.command(command));
    return command;
  }

  private async nextNumber(locationId: string, sequence: 'orderSeq' | 'commandSeq'): Promise<number> {
    const number = await this.deps.locations.nextNumber(locationId, sequence);
    if (number === null) throw new ProblemError(problems.notFound('Location does not exist'));
    return number;
  }

  /**
   * Announces new work. The record is already stored, so a failed publish must not fail the
   * request (a retry would create the work twice): polls, stream replays and resyncs find it.
   */
  private async announce(log: Logger, type: 'order' | 'command', publish: Promise<void>): Promise<void> {
    try {
      await publish;
      this.deps.published.inc({ type });
    } catch (err) {
      log.warn({ err, type }, 'could not announce new work; registers will find it by polling');
    }
  }

  /**
   * Inserts a new record under the next number of its sequence. For a request with an
   * Idempotency-Key whose earlier attempt already inserted (its answer lost, say, to a node that
   * died), it answers the record that attempt created; the number this attempt drew stays a gap
   * (numbers are never reused). A number found taken otherwise is drawn again: MongoDB's
   * findOneAndUpdate hands each out once, but the in-memory stand-in's is not atomic, and a
   * repeated number must cost a retry, not a 400.
   */
  private async insertNumbered<T>(
    draw: () => Promise<number>,
    insert: (number: number) => Promise<T>,
    idempotencyId: string | undefined,
    createdBy: (id: string) => Promise<T | null>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const number = await draw();
      try {
        return await insert(number);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const created = idempotencyId === undefined ? null : await createdBy(idempotencyId);
        if (created) return created;
        if (attempt >= NUMBER_DRAWS) throw err;
      }
    }
  }
}
