import { isOrderState } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord } from '@pos/shared/domain/records';
import type { REGISTER_OPERATIONS } from '@pos/shared/openapi/operations';
import { validators } from '@pos/shared/schemas/requests';
import { AppContext, sessionOf } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import type { Handlers } from './mount';
import { numberParam, sendOutcome } from './respond';
import { serveStream } from './stream';

/**
 * The register's side (docs/register-interface.md): list its work, report
 * outcomes, acknowledge commands, follow its stream.
 */
export function registerHandlers(deps: ApiDeps): Handlers<typeof REGISTER_OPERATIONS> {
  const { orders, transitions, commands } = deps.services;
  const scopeOf = (ctx: AppContext) => ({ locationId: sessionOf(ctx).locationId });

  return {
    listWork: async (ctx: AppContext) => {
      ctx.body = await orders.work(sessionOf(ctx).locationId);
    },

    updateOrderStatus: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      const { newState } = bodyOf(ctx, validators.statusUpdate);
      if (!isOrderState(newState)) throw new ProblemError(problems.noEnumConstant(newState));
      await beginWork(ctx);
      sendOutcome(ctx, await transitions.order(ctx.state, scopeOf(ctx), orderNumber, { kind: 'status', newState }));
    },

    reportOrderFailure: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      const { reason } = bodyOf(ctx, validators.failureReport);
      await beginWork(ctx);
      if (reason) ctx.state.log.info({ orderNumber, reason }, 'failure reported');
      sendOutcome(ctx, await transitions.order(ctx.state, scopeOf(ctx), orderNumber, { kind: 'failure', reason }));
    },

    acknowledgeCommand: async (ctx: AppContext) => {
      const number = numberParam(ctx.params.number, 'Command');
      await beginWork(ctx);
      ctx.body = toCommandRecord(await commands.acknowledge(sessionOf(ctx).locationId, number, ctx.state.log));
    },

    streamWork: async (ctx: AppContext) => {
      const session = sessionOf(ctx);
      await serveStream(ctx, deps, { kind: 'register', session, keyHash: ctx.state.keyHash ?? '' });
      // A stream held is presence on every node's reading until it ends (see PresenceTracker).
      if (ctx.state.ending) {
        deps.presence.streamOpened(session);
        void ctx.state.ending.then(() => deps.presence.streamClosed(session._id));
      }
    },
  };
}
