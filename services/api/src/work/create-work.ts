import type { CommandKind } from '../../../../shared/src/domain/commands';
import { ProblemError, problems } from '../../../../shared/src/domain/problem';
import type { CommandDoc, OrderDoc, OrderRow } from '../../../../shared/src/domain/records';
import type { RowInput } from '../../../../shared/src/schemas';
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

/** Creates an order; one created PLACED is announced to the location's streams at once. */
export async function createOrder(deps: WorkDeps, request: OrderRequest): Promise<OrderDoc> {
  const number = await nextNumber(deps, request.locationId, 'orderSeq');
  const { rows, ...rest } = request;
  const order = await deps.orders.insert({ ...rest, number, rows: numberRows(rows) }, new Date());
  if (order.state === 'PLACED') {
    await deps.events.order(order);
    deps.metrics.eventsPublished.inc({ type: 'order' });
  }
  return order;
}

export async function createCommand(
  deps: WorkDeps,
  request: { locationId: string; kind: CommandKind; tableNumber?: number },
): Promise<CommandDoc> {
  const number = await nextNumber(deps, request.locationId, 'commandSeq');
  const command = await deps.commands.insert({ ...request, number }, new Date(), deps.config.commandTtlMs);
  await deps.events.command(command);
  deps.metrics.eventsPublished.inc({ type: 'command' });
  return command;
}
