import type { CommandKind } from '@pos/shared/domain/commands';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { CommandDoc, OrderDoc, OrderRow } from '@pos/shared/domain/records';
import type { Logger } from '@pos/shared/log';
import type { RowInput } from '@pos/shared/schemas/requests';
import { DUPLICATE_KEY } from '@pos/shared/store/store-errors';
import type { ApiDeps } from '../deps';

type WorkDeps = Pick<ApiDeps, 'locations' | 'orders' | 'commands' | 'events' | 'config' | 'metrics'>;

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

/**
 * Inserts a new record; for a request with an Idempotency-Key whose earlier attempt already
 * inserted (its answer lost, say, to a node that died), the record that attempt created. The
 * number the retry drew is then left unused: numbers are never reused, so it stays a gap.
 */
async function insertOnce<T>(idempotencyId: string | undefined, insert: () => Promise<T>, createdBy: (id: string) => Promise<T | null>): Promise<T> {
  try {
    return await insert();
  } catch (err) {
    if (idempotencyId === undefined || (err as { code?: unknown }).code !== DUPLICATE_KEY) throw err;
    const created = await createdBy(idempotencyId);
    if (!created) throw err;
    return created;
  }
}

/**
 * Creates an order; one created PLACED is announced to the location's streams at once (again,
 * for a retry that found its first attempt's order: that announcement may be the one lost).
 */
export async function createOrder(deps: WorkDeps, log: Logger, request: OrderRequest, idempotencyId?: string): Promise<OrderDoc> {
  const number = await nextNumber(deps, request.locationId, 'orderSeq');
  const { rows, ...rest } = request;
  const order = await insertOnce(
    idempotencyId,
    () => deps.orders.insert({ ...rest, number, rows: numberRows(rows), idempotencyId }, new Date()),
    (id) => deps.orders.findCreatedBy(request.locationId, id),
  );
  if (order.state === 'PLACED') await announce(deps, log, 'order', deps.events.order(order));
  return order;
}

export async function createCommand(
  deps: WorkDeps,
  log: Logger,
  request: { locationId: string; kind: CommandKind; tableNumber?: number },
  idempotencyId?: string,
): Promise<CommandDoc> {
  const number = await nextNumber(deps, request.locationId, 'commandSeq');
  const command = await insertOnce(
    idempotencyId,
    () => deps.commands.insert({ ...request, number, idempotencyId }, new Date(), deps.config.commandTtlMs),
    (id) => deps.commands.findCreatedBy(request.locationId, id),
  );
  await announce(deps, log, 'command', deps.events.command(command));
  return command;
}
