import type { CommandKind } from '@pos/shared/domain/commands';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { CommandDoc, OrderDoc, OrderRow } from '@pos/shared/domain/records';
import type { Logger } from '@pos/shared/log';
import type { RowInput } from '@pos/shared/schemas/requests';
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

/** Creates an order; one created PLACED is announced to the location's streams at once. */
export async function createOrder(deps: WorkDeps, log: Logger, request: OrderRequest): Promise<OrderDoc> {
  const number = await nextNumber(deps, request.locationId, 'orderSeq');
  const { rows, ...rest } = request;
  const order = await deps.orders.insert({ ...rest, number, rows: numberRows(rows) }, new Date());
  if (order.state === 'PLACED') await announce(deps, log, 'order', deps.events.order(order));
  return order;
}

export async function createCommand(
  deps: WorkDeps,
  log: Logger,
  request: { locationId: string; kind: CommandKind; tableNumber?: number; sessionId?: string },
): Promise<CommandDoc> {
  const number = await nextNumber(deps, request.locationId, 'commandSeq');
  const command = await deps.commands.insert({ ...request, number }, new Date(), deps.config.commandTtlMs);
  await announce(deps, log, 'command', deps.events.command(command));
  return command;
}
