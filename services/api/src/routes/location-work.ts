import { isOrderState } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOperatorOrderRecord, toOrderRecord } from '@pos/shared/domain/records';
import type { LOCATION_WORK_OPERATIONS } from '@pos/shared/openapi/operations';
import { JOB } from '@pos/shared/queue/jobs';
import { encodeHistoryCursor, parseHistoryQuery } from '@pos/shared/schemas/history';
import { queryValidators, validators } from '@pos/shared/schemas/requests';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { operatorOfRequest } from '../middleware/admin-auth';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { createCommand, createOrder } from '../work/create-work';
import { locationOf } from './admin-access';
import type { Handlers } from './mount';
import { linkNext, queryOf, sendPage } from './pages';
import { numberParam, sendOutcome } from './respond';
import { serveStream } from './stream';

/**
 * A location's work for its operators (the admin API): counter orders, commands, recovery, paged
 * lists, the history, and what the board needs: the location's event stream, status updates and
 * acknowledgements on the location's behalf.
 */
export function locationWorkHandlers(deps: ApiDeps): Handlers<typeof LOCATION_WORK_OPERATIONS> {
  return {
    createCounterOrder: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.order);
      await beginWork(ctx);
      const location = await locationOf(ctx, deps);
      const order = await createOrder(deps, ctx.state.log, { locationId: location._id, state: 'PLACED', ...input }, ctx.state.idempotencyId);
      ctx.state.log.info({ orderNumber: order.number }, 'counter order created');
      ctx.status = 201;
      ctx.body = toOrderRecord(order);
    },

    createCommand: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.command);
      await beginWork(ctx);
      const location = await locationOf(ctx, deps);
      const command = await createCommand(deps, ctx.state.log, { locationId: location._id, ...input }, ctx.state.idempotencyId);
      ctx.state.log.info({ commandNumber: command.number, kind: command.kind }, 'command created');
      ctx.status = 201;
      ctx.body = toCommandRecord(command);
    },

    listCommands: async (ctx: AppContext) => {
      const location = await locationOf(ctx, deps);
      const page = queryOf(ctx, queryValidators.numberPage);
      const commands = await deps.commands.listLive(location._id, new Date(), page.after, page.limit);
      sendPage(ctx, commands.map(toCommandRecord), page.limit, (last) => last.number);
    },

    listOrders: async (ctx: AppContext) => {
      const location = await locationOf(ctx, deps);
      const state = ctx.query.state;
      // the register interface's wording for a missing or unknown state name
      if (typeof state !== 'string' || state === '') throw new ProblemError(problems.required('state'));
      if (!isOrderState(state)) throw new ProblemError(problems.noEnumConstant(state));
      const page = queryOf(ctx, queryValidators.orderList);
      const orders = await deps.orders.listByState(location._id, page.state, page.after, page.limit, page.overdue);
      // the operator's form: each order with its failure count
      sendPage(ctx, orders.map(toOperatorOrderRecord), page.limit, (last) => last.number);
    },

    // A status update on the location's behalf: the register's transition, through the same queue.
    updateOrderStatusForLocation: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      const { newState } = bodyOf(ctx, validators.statusUpdate);
      if (!isOrderState(newState)) throw new ProblemError(problems.noEnumConstant(newState));
      await beginWork(ctx);
      const location = await locationOf(ctx, deps);
      const outcome = await deps.jobs.run(
        { name: JOB.orderAction, data: { scope: { locationId: location._id }, orderNumber, action: { kind: 'status', newState } } },
        ctx.state,
      );
      sendOutcome(ctx, outcome);
    },

    // Acknowledging a command on the location's behalf, as a register would.
    acknowledgeCommandForLocation: async (ctx: AppContext) => {
      const number = numberParam(ctx.params.number, 'Command');
      await beginWork(ctx);
      const location = await locationOf(ctx, deps);
      const command = await deps.commands.acknowledge(location._id, number, new Date());
      if (!command) throw new ProblemError(problems.commandNotFound());
      ctx.state.log.info({ commandNumber: number }, 'command acknowledged');
      await deps.events.commandAcknowledged(command).catch((err: unknown) => ctx.state.log.warn({ err }, 'could not offer the acknowledgement to webhooks'));
      ctx.body = toCommandRecord(command);
    },

    /**
     * The location's event stream for the operator: the register stream's events, cursor, replay
     * and end (it shares their machinery), with each order's failure count.
     */
    streamLocationWork: async (ctx: AppContext) => {
      const location = await locationOf(ctx, deps);
      await serveStream(ctx, deps, { kind: 'operator', locationId: location._id, operatorId: operatorOfRequest(ctx).id });
    },

    // Finished orders once archived (ORDER_ARCHIVE_AFTER after they finished), by completion time.
    orderHistory: async (ctx: AppContext) => {
      const location = await locationOf(ctx, deps);
      const page = await deps.archive.history({ locationId: location._id, ...parseHistoryQuery(ctx.query) });
      // a bare array, paged like the other lists (its cursor is opaque: completion time and number)
      linkNext(ctx, page.next && encodeHistoryCursor(page.next));
      ctx.body = page.orders.map(toOrderRecord);
    },

    recoverOrder: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      await beginWork(ctx);
      const location = await locationOf(ctx, deps);
      const outcome = await deps.jobs.run({ name: JOB.orderAction, data: { scope: { locationId: location._id }, orderNumber, action: { kind: 'recover' } } }, ctx.state);
      sendOutcome(ctx, outcome);
    },
  };
}
