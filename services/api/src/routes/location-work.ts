import { isOrderState } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOperatorOrderRecord, toOrderRecord } from '@pos/shared/domain/records';
import type { LOCATION_WORK_OPERATIONS } from '@pos/shared/openapi/operations';
import { parseHistoryQuery } from '@pos/shared/schemas/history';
import { encodeHistoryCursor } from '@pos/shared/schemas/history-cursor';
import { validators } from '@pos/shared/schemas/requests';
import { queryValidators } from '@pos/shared/schemas/queries';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { operatorOfRequest } from '../middleware/admin-auth';
import { beginWork } from '../middleware/idempotency';
import { auditDone } from '../audit/change';
import type { JobOutcome } from '@pos/shared/queue/jobs';
import { bodyOf } from '../middleware/json-body';
import { locationOf } from './admin-access';
import { orderCart } from './cart';
import type { Handlers } from './mount';
import { linkNext, queryOf, sendPage } from './pages';
import { numberParam, sendOutcome } from './respond';
import { serveStream } from './stream';

/** The `state` of a list of orders, in the register interface's wording when missing or unknown. */
function checkStateQuery(state: unknown): void {
  if (typeof state !== 'string' || state === '') throw new ProblemError(problems.required('state'));
  if (!isOrderState(state)) throw new ProblemError(problems.noEnumConstant(state));
}

/** An order transition's outcome as the answer, and the order's state after it in the audit record. */
function sendOrderOutcome(ctx: AppContext, orderNumber: number, outcome: JobOutcome): void {
  sendOutcome(ctx, outcome);
  if ('body' in outcome) auditDone(ctx, orderNumber, { state: (outcome.body as { state: string }).state });
}

/** The location the path names, within the operator's scope (a 404 otherwise). */
async function scopeOf(ctx: AppContext, locations: Parameters<typeof locationOf>[1]): Promise<{ locationId: string }> {
  return { locationId: (await locationOf(ctx, locations))._id };
}

/** Counter orders and commands made on the location's behalf. */
function workMade(
  deps: ApiDeps,
): Pick<Handlers<typeof LOCATION_WORK_OPERATIONS>, 'createCounterOrder' | 'createCommand'> {
  const { locations, newWork, menus } = deps.services;
  return {
    // Priced from the location's menu like a customer's; an operator may sell a snoozed product (docs/menu.md).
    createCounterOrder: async (ctx: AppContext) => {
      const location = await locationOf(ctx, locations);
      const cart = orderCart(ctx, menus, location, true);
      const rows = await cart.rows();
      await beginWork(ctx);
      const order = await newWork.order(
        {
          locationId: location._id,
          state: 'PLACED',
          rows,
          ...(cart.tableNumber !== undefined && { tableNumber: cart.tableNumber }),
        },
        ctx.state.log,
        ctx.state.idempotencyId,
      );
      ctx.state.log.info({ orderNumber: order.number }, 'counter order created');
      auditDone(ctx, order.number, {
        state: order.state,
        rows: order.rows.length,
        ...(order.tableNumber !== undefined && { tableNumber: order.tableNumber }),
      });
      ctx.status = 201;
      ctx.body = toOrderRecord(order);
    },

    createCommand: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.command);
      await beginWork(ctx);
      const { locationId } = await scopeOf(ctx, locations);
      const command = await newWork.command({ locationId, ...input }, ctx.state.log, ctx.state.idempotencyId);
      ctx.state.log.info({ commandNumber: command.number, kind: command.kind }, 'command created');
      auditDone(ctx, command.number, {
        kind: command.kind,
        ...(command.tableNumber !== undefined && { tableNumber: command.tableNumber }),
      });
      ctx.status = 201;
      ctx.body = toCommandRecord(command);
    },
  };
}

/** Transitions and acknowledgements on the location's behalf, through the same queue as a register's. */
function workMoved(
  deps: ApiDeps,
): Pick<
  Handlers<typeof LOCATION_WORK_OPERATIONS>,
  'updateOrderStatusForLocation' | 'acknowledgeCommandForLocation' | 'recoverOrder'
> {
  const { locations, commands, transitions } = deps.services;
  return {
    // A status update on the location's behalf: the register's transition, through the same queue.
    updateOrderStatusForLocation: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      const { newState } = bodyOf(ctx, validators.statusUpdate);
      if (!isOrderState(newState)) throw new ProblemError(problems.noEnumConstant(newState));
      await beginWork(ctx);
      sendOrderOutcome(
        ctx,
        orderNumber,
        await transitions.order(ctx.state, await scopeOf(ctx, locations), orderNumber, { kind: 'status', newState }),
      );
    },

    // Acknowledging a command on the location's behalf, as a register would.
    acknowledgeCommandForLocation: async (ctx: AppContext) => {
      const number = numberParam(ctx.params.number, 'Command');
      await beginWork(ctx);
      const { locationId } = await scopeOf(ctx, locations);
      ctx.body = toCommandRecord(await commands.acknowledge(locationId, number, ctx.state.log));
      auditDone(ctx, number, { acknowledged: true });
    },

    recoverOrder: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      await beginWork(ctx);
      sendOrderOutcome(
        ctx,
        orderNumber,
        await transitions.order(ctx.state, await scopeOf(ctx, locations), orderNumber, { kind: 'recover' }),
      );
    },
  };
}

/** The location's lists, its history and its stream. */
function workRead(
  deps: ApiDeps,
): Pick<
  Handlers<typeof LOCATION_WORK_OPERATIONS>,
  'listCommands' | 'listOrders' | 'streamLocationWork' | 'orderHistory'
> {
  const { locations, orders, commands } = deps.services;
  return {
    listCommands: async (ctx: AppContext) => {
      const { locationId } = await scopeOf(ctx, locations);
      const page = queryOf(ctx, queryValidators.numberPage);
      sendPage(
        ctx,
        (await commands.listLive(locationId, page.after, page.limit)).map(toCommandRecord),
        page.limit,
        (last) => last.number,
      );
    },

    listOrders: async (ctx: AppContext) => {
      const { locationId } = await scopeOf(ctx, locations);
      checkStateQuery(ctx.query.state);
      const page = queryOf(ctx, queryValidators.orderList);
      const found = await orders.listByState(locationId, page.state, page.after, page.limit, page.overdue);
      // the operator's form: each order with its failure count
      sendPage(ctx, found.map(toOperatorOrderRecord), page.limit, (last) => last.number);
    },

    // The register stream's events, cursor, replay and end (its machinery), with each order's failure count.
    streamLocationWork: async (ctx: AppContext) => {
      const { locationId } = await scopeOf(ctx, locations);
      await serveStream(ctx, deps, { kind: 'operator', locationId, operatorId: operatorOfRequest(ctx).id });
    },

    // Finished orders once archived (ORDER_ARCHIVE_AFTER after they finished), by completion time.
    orderHistory: async (ctx: AppContext) => {
      const { locationId } = await scopeOf(ctx, locations);
      const page = await orders.history({ locationId, ...parseHistoryQuery(ctx.query) });
      // a bare array, paged like the other lists (its cursor is opaque: completion time and number)
      linkNext(ctx, page.next && encodeHistoryCursor(page.next));
      ctx.body = page.orders.map(toOrderRecord);
    },
  };
}

/**
 * A location's work for its operators (the admin API): counter orders, commands, recovery, paged
 * lists, the history, and what the board needs: the location's event stream, status updates and
 * acknowledgements on the location's behalf.
 */
export function locationWorkHandlers(deps: ApiDeps): Handlers<typeof LOCATION_WORK_OPERATIONS> {
  return { ...workMade(deps), ...workMoved(deps), ...workRead(deps) };
}
