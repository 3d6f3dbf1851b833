import { rowsReplacementConflict } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOrderRecord } from '@pos/shared/domain/records';
import type { OrderDoc } from '@pos/shared/store/documents';
import type { CUSTOMER_OPERATIONS } from '@pos/shared/openapi/operations';
import { JOB } from '@pos/shared/queue/jobs';
import { validators } from '@pos/shared/schemas/requests';
import { findOrder } from '@pos/shared/store/archive';
import { OrderScope, raceBackoff, VERSION_RACE_RETRIES } from '@pos/shared/store/orders';
import { AppContext, sessionOf } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { createCommand, createOrder, numberRows } from '../work/create-work';
import { admitCustomerOrder } from '../work/admission';
import { CustomerLimits } from '../work/customer-limits';
import { numberParam, sendOutcome } from './respond';
import type { Handlers } from './mount';

/**
 * The customer app's side of an order: create it (SELECTING), change its rows, finish and
 * submit it, ask for the table state or the bill, and close its own session. A customer sees
 * only its own session's orders; another's number answers like a missing order.
 */
export function customerHandlers(deps: ApiDeps): Handlers<typeof CUSTOMER_OPERATIONS> {
  const limits = new CustomerLimits({
    orders: deps.orders,
    commands: deps.commands,
    maxOpenOrders: deps.config.limits.customerMaxOpenOrders,
    maxCommands: deps.config.limits.customerMaxCommands,
  });

  const scopeOf = (ctx: AppContext): Required<OrderScope> => {
    const session = sessionOf(ctx);
    return { locationId: session.locationId, sessionId: session._id };
  };

  // A finished order may have moved to the archive: read as before (its rows cannot change).
  const ownOrder = async (ctx: AppContext, orderNumber: number): Promise<OrderDoc> => {
    const found = await findOrder(deps, scopeOf(ctx), orderNumber);
    if (!found) throw new ProblemError(problems.orderNotFound());
    return found.order;
  };

  // Finish and submit are transitions: the worker applies them with the state machine.
  const transition = (kind: 'finish' | 'submit') => async (ctx: AppContext) => {
    const orderNumber = numberParam(ctx.params.number, 'Order');
    if (kind === 'submit') await admitCustomerOrder(deps, sessionOf(ctx).locationId);
    await beginWork(ctx);
    const outcome = await deps.jobs.run({ name: JOB.orderAction, data: { scope: scopeOf(ctx), orderNumber, action: { kind } } }, ctx.state);
    sendOutcome(ctx, outcome);
  };

  return {
    createCustomerOrder: async (ctx: AppContext) => {
      const session = sessionOf(ctx);
      const input = bodyOf(ctx, validators.order);
      const tableNumber = limits.tableOf(session, input.tableNumber);
      await admitCustomerOrder(deps, session.locationId);
      await beginWork(ctx);
      const order = await limits.openOrder(session, () =>
        createOrder(
          deps,
          ctx.state.log,
          {
            locationId: session.locationId,
            state: 'SELECTING',
            rows: input.rows,
            tableNumber,
            userNumber: session.userNumber,
            sessionId: session._id,
          },
          ctx.state.idempotencyId,
        ),
      );
      ctx.state.log.info({ orderNumber: order.number }, 'customer order created');
      ctx.status = 201;
      ctx.body = toOrderRecord(order);
    },

    getCustomerOrder: async (ctx: AppContext) => {
      ctx.body = toOrderRecord(await ownOrder(ctx, numberParam(ctx.params.number, 'Order')));
    },

    replaceOrderRows: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      const rows = numberRows(bodyOf(ctx, validators.rows).rows);
      await beginWork(ctx);
      for (let attempt = 1; attempt <= VERSION_RACE_RETRIES; attempt++) {
        const order = await ownOrder(ctx, orderNumber);
        const conflict = rowsReplacementConflict(order);
        if (conflict) throw new ProblemError(problems.conflict(conflict));
        const updated = await deps.orders.replaceRows(order, rows, new Date());
        if (updated) {
          ctx.state.log.info({ orderNumber, rows: rows.length, version: updated.version }, 'order rows replaced');
          ctx.body = toOrderRecord(updated);
          return;
        }
        ctx.state.log.debug({ orderNumber, attempt }, 'order changed since read; reading again');
        await raceBackoff(attempt);
      }
      throw new ProblemError(problems.concurrentModification());
    },

    finishOrder: transition('finish'),
    submitOrder: transition('submit'),

    createCustomerCommand: async (ctx: AppContext) => {
      const session = sessionOf(ctx);
      const input = bodyOf(ctx, validators.customerCommand);
      const tableNumber = limits.tableOf(session, input.tableNumber);
      await beginWork(ctx);
      const command = await limits.command(session, () =>
        createCommand(
          deps,
          ctx.state.log,
          { locationId: session.locationId, kind: input.kind, tableNumber, sessionId: session._id },
          ctx.state.idempotencyId,
        ),
      );
      ctx.state.log.info({ commandNumber: command.number, kind: command.kind }, 'customer command created');
      ctx.status = 201;
      ctx.body = toCommandRecord(command);
    },

    closeOwnSession: async (ctx: AppContext) => {
      await beginWork(ctx);
      const outcome = await deps.jobs.run({ name: JOB.sessionClose, data: { sessionId: sessionOf(ctx)._id } }, ctx.state);
      sendOutcome(ctx, outcome);
    },
  };
}
