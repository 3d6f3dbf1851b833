import { isOrderState } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOrderRecord, WorkRecord } from '@pos/shared/domain/records';
import type { REGISTER_OPERATIONS } from '@pos/shared/openapi/operations';
import { JOB } from '@pos/shared/queue/jobs';
import { validators } from '@pos/shared/schemas/requests';
import { AppContext, sessionOf } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import type { Handlers } from './mount';
import { numberParam, sendOutcome } from './respond';
import { serveStream } from './stream';

/** The register's side (docs/register-interface.md): list its work, report outcomes, acknowledge commands, follow its stream. */
export function registerHandlers(deps: ApiDeps): Handlers<typeof REGISTER_OPERATIONS> {
  return {
    listWork: async (ctx: AppContext) => {
      const { orders, commands } = await deps.work.list(sessionOf(ctx).locationId, new Date());
      const work: WorkRecord[] = [...orders.map(toOrderRecord), ...commands.map(toCommandRecord)];
      ctx.body = work;
    },

    updateOrderStatus: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      const { newState } = bodyOf(ctx, validators.statusUpdate);
      if (!isOrderState(newState)) throw new ProblemError(problems.noEnumConstant(newState));
      await beginWork(ctx);
      const outcome = await deps.jobs.run(
        { name: JOB.orderAction, data: { scope: { locationId: sessionOf(ctx).locationId }, orderNumber, action: { kind: 'status', newState } } },
        ctx.state,
      );
      sendOutcome(ctx, outcome);
    },

    reportOrderFailure: async (ctx: AppContext) => {
      const orderNumber = numberParam(ctx.params.number, 'Order');
      const { reason } = bodyOf(ctx, validators.failureReport);
      await beginWork(ctx);
      if (reason) ctx.state.log.info({ orderNumber, reason }, 'failure reported');
      const outcome = await deps.jobs.run(
        { name: JOB.orderAction, data: { scope: { locationId: sessionOf(ctx).locationId }, orderNumber, action: { kind: 'failure', reason } } },
        ctx.state,
      );
      sendOutcome(ctx, outcome);
    },

    acknowledgeCommand: async (ctx: AppContext) => {
      const number = numberParam(ctx.params.number, 'Command');
      await beginWork(ctx);
      const command = await deps.commands.acknowledge(sessionOf(ctx).locationId, number, new Date());
      if (!command) throw new ProblemError(problems.commandNotFound());
      ctx.state.log.info({ commandNumber: number }, 'command acknowledged');
      await deps.events.commandAcknowledged(command).catch((err: unknown) => ctx.state.log.warn({ err }, 'could not offer the acknowledgement to webhooks'));
      ctx.body = toCommandRecord(command);
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
