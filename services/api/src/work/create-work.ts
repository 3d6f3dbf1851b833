import type { CommandKind } from '@pos/shared/domain/commands';
import { addDeadlines } from '@pos/shared/queue/deadlines';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { OrderRow } from '@pos/shared/domain/records';
import type { CommandDoc, OrderDoc } from '@pos/shared/store/documents';
import type { Logger } from '@pos/shared/log';
import type { RowInput } from '@pos/shared/schemas/requests';
import { isDuplicateKey } from '@pos/shared/store/store-errors';
import type { ApiDeps } from '../deps';

type WorkDeps = Pick<ApiDeps, 'locations' | 'orders' | 'commands' | 'events' | 'config' | 'metrics' | 'deadlines'>;

export interface OrderRequest {
  locationId: string;
  state: 'SELECTING' | 'PLACED';
  rows: RowInput[];
  tableNumber?: number;
  userNumber?: number;
  sessionId?: string;
}

/** Rows as stored: numbered from 1 in the order given. */
export function numberRows(rows: RowInput[]): OrderRow[] {
  return rows.map((row, index) => ({ rowNumber: index + 1, ...row }));
}

async function nextNumber(deps: WorkDeps, locationId: string, sequence: 'orderSeq' | 'commandSeq'): Promise<number> {
  const number = await deps.locations.nextNumber(locationId, sequence);
  if (number === null) throw new ProblemError(problems.notFound('Location does not exist'));
  return number;
}

/**
 * Announces new work. The record is already stored, so a failed publish must not fail the
 * request (a retry would create the work twice): polls, stream replays and resyncs find it.
 */
async function announce(deps: WorkDeps, log: Logger, type: 'order' | 'command', publish: Promise<void>): Promise<void> {
  try {
    await publish;
    deps.metrics.eventsPublished.inc({ type });
  } catch (err) {
    log.warn({ err, type }, 'could not announce new work; registers will find it by polling');
  }
}

/** How often a create draws another number after its number turned out taken. */
const NUMBER_DRAWS = 3;

/**
 * Inserts a new record under the next number of its sequence. For a request with an
 * Idempotency-Key whose earlier attempt already inserted (its answer lost, say, to a node that
 * died), it answers the record that attempt created; the number this attempt drew stays a gap
 * (numbers are never reused). A number found taken otherwise is drawn again: MongoDB's
 * findOneAndUpdate hands each out once, but the in-memory stand-in's is not atomic, and a
 * repeated number must cost a retry, not a 400.
 */
async function insertNumbered<T>(
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

/**
 * Creates an order; one created PLACED is announced to the location's streams at once (again,
 * for a retry that found its first attempt's order: that announcement may be the one lost).
 */
export async function createOrder(deps: WorkDeps, log: Logger, request: OrderRequest, idempotencyId?: string): Promise<OrderDoc> {
  const { rows, ...rest } = request;
  const order = await insertNumbered(
    () => nextNumber(deps, request.locationId, 'orderSeq'),
    (number) => deps.orders.insert({ ...rest, number, rows: numberRows(rows), idempotencyId }, new Date()),
    idempotencyId,
    (id) => deps.orders.findCreatedBy(request.locationId, id),
  );
  if (order.state === 'PLACED') {
    await announce(deps, log, 'order', deps.events.order(order));
    // A counter order is placed here, not by the worker: its deadlines are added here (a retry adds none twice).
    await addDeadlines(deps.deadlines, deps.config.presence, order, () => deps.locations.orderDeadline(order.locationId)).catch((err: unknown) =>
      log.warn({ err, orderNumber: order.number }, 'could not add the order deadlines'),
    );
  }
  return order;
}

export async function createCommand(
  deps: WorkDeps,
  log: Logger,
  request: { locationId: string; kind: CommandKind; tableNumber?: number; sessionId?: string },
  idempotencyId?: string,
): Promise<CommandDoc> {
  const command = await insertNumbered(
    () => nextNumber(deps, request.locationId, 'commandSeq'),
    (number) => deps.commands.insert({ ...request, number, idempotencyId }, new Date(), deps.config.orders.commandTtlMs),
    idempotencyId,
    (id) => deps.commands.findCreatedBy(request.locationId, id),
  );
  await announce(deps, log, 'command', deps.events.command(command));
  return command;
}
