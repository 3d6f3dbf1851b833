import { toCommandRecord, toOrderRecord } from '@pos/shared/domain/records';
import type { CUSTOMER_OPERATIONS } from '@pos/shared/openapi/operations';
import { validators } from '@pos/shared/schemas/requests';
import type { OrderScope } from '@pos/shared/store/orders';
import { AppContext, sessionOf } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { orderCart, rowsCart } from './cart';
import type { Handlers } from './mount';
import { numberParam, sendOutcome } from './respond';

/** The customer's orders: those of its own session, at its location. */
function scopeOf(ctx: AppContext): Required<OrderScope> {
  const session = sessionOf(ctx);
  return { locationId: session.locationId, sessionId: session._id };
}

/**
 * Finish and submit are transitions: the worker applies them with the state machine. A submission
 * is refused while the location takes no orders, or while a product of the order is snoozed.
 */
function moveOrder(deps: Pick<ApiDeps, 'services'>, kind: 'finish' | 'submit') {
  const { transitions, orderIntake, menus, orders } = deps.services;
  return async (ctx: AppContext) => {
    const orderNumber = numberParam(ctx.params.number, 'Order');
    if (kind === 'submit') {
      const location = await orderIntake.read(sessionOf(ctx).locationId);
      orderIntake.check(location);
      if (location)
        await menus.checkAvailable(location, async () => (await orders.find(scopeOf(ctx), orderNumber)).rows);
    }
    await beginWork(ctx);
    sendOutcome(ctx, await transitions.order(ctx.state, scopeOf(ctx), orderNumber, { kind }));
  };
}

/**
 * A new order (SELECTING), its rows by the location's rules: priced from its menu when it has one (routes/cart.ts).
 */
function createOrder(deps: Pick<ApiDeps, 'services'>) {
  const { newWork, orderIntake, customerLimits, menus } = deps.services;
  return async (ctx: AppContext): Promise<void> => {
    const session = sessionOf(ctx);
    const location = await orderIntake.read(session.locationId);
    const cart = orderCart(ctx, menus, location);
    const tableNumber = customerLimits.tableOf(session, cart.tableNumber);
    orderIntake.check(location);
    const rows = await cart.rows();
    await beginWork(ctx);
    const order = await customerLimits.openOrder(session, () =>
      newWork.order(
        {
          locationId: session.locationId,
          state: 'SELECTING',
          rows,
          tableNumber,
          userNumber: session.userNumber,
          sessionId: session._id,
        },
        ctx.state.log,
        ctx.state.idempotencyId,
      ),
    );
    ctx.state.log.info({ orderNumber: order.number }, 'customer order created');
    ctx.status = 201;
    ctx.body = toOrderRecord(order);
  };
}

/**
 * The customer app's side of an order: create it (SELECTING), change its rows, finish and
 * submit it, ask for the table state or the bill, and close its own session. A customer sees
 * only its own session's orders; another's number answers like a missing order.
 */
export function customerHandlers(deps: Pick<ApiDeps, 'services'>): Handlers<typeof CUSTOMER_OPERATIONS> {
  const { orders, newWork, transitions, orderIntake, customerLimits, menus } = deps.services;
  return {
    createCustomerOrder: createOrder(deps),

    getCustomerOrder: async (ctx: AppContext) => {
      ctx.body = toOrderRecord(await orders.find(scopeOf(ctx), numberParam(ctx.params.number, 'Order')));
    },

    replaceOrderRows: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      const rows = await rowsCart(ctx, menus, await orderIntake.read(sessionOf(ctx).locationId))();
      await beginWork(ctx);
      ctx.body = toOrderRecord(await orders.replaceRows(scopeOf(ctx), orderNumber, rows, ctx.state.log));
    },

    finishOrder: moveOrder(deps, 'finish'),
    submitOrder: moveOrder(deps, 'submit'),

    createCustomerCommand: async (ctx: AppContext) => {
      const session = sessionOf(ctx);
      const input = bodyOf(ctx, validators.customerCommand);
      const tableNumber = customerLimits.tableOf(session, input.tableNumber);
      await beginWork(ctx);
      const command = await customerLimits.command(session, () =>
        newWork.command(
          { locationId: session.locationId, kind: input.kind, tableNumber, sessionId: session._id },
          ctx.state.log,
          ctx.state.idempotencyId,
        ),
      );
      ctx.state.log.info({ commandNumber: command.number, kind: command.kind }, 'customer command created');
      ctx.status = 201;
      ctx.body = toCommandRecord(command);
    },

    closeOwnSession: async (ctx: AppContext) => {
      await beginWork(ctx);
      sendOutcome(ctx, await transitions.closeSession(ctx.state, sessionOf(ctx)._id));
    },
  };
}
