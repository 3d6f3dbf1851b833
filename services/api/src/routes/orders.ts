import type Router from '@koa/router';
import { isOrderState } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOrderRecord, WorkRecord } from '@pos/shared/domain/records';
import { JOB } from '@pos/shared/queue/jobs';
import { validators } from '@pos/shared/schemas/requests';
import { AppContext, AppState, sessionOf } from '../context';
import type { ApiDeps } from '../deps';
import { requireSession } from '../middleware/api-key-auth';
import { beginWork, idempotency } from '../middleware/idempotency';
import { bodyOf, jsonBody } from '../middleware/json-body';
import { numberParam, sendOutcome } from './respond';
import { createRouter } from './router';

/** The register's work: list it, report outcomes, acknowledge commands. */
export function serviceRoutes(deps: ApiDeps): Router<AppState> {
  const router = createRouter(deps.config.http.basePath);
  // authenticated, then counted against the key's rate limit (when RATE_LIMIT is set)
  const service = [requireSession(deps.sessionLookup, 'SERVICE', deps.presence.sighted), deps.rateLimit];
  const json = jsonBody(deps.config.http.bodyLimitBytes);
  // Every write: authenticated, its body read, and safe to retry under an Idempotency-Key
  // (each handler calls beginWork once its input is checked).
  const write = [...service, json, idempotency(deps.idempotency, (ctx) => ({ scope: sessionOf(ctx)._id, maxRecords: deps.config.idempotency.maxRecords }))];

  router.get('/orders/location', ...service, async (ctx: AppContext) => {
    const { orders, commands } = await deps.work.list(sessionOf(ctx).locationId, new Date());
    const work: WorkRecord[] = [...orders.map(toOrderRecord), ...commands.map(toCommandRecord)];
    ctx.body = work;
  });

  router.put('/orders/:number/statusupdate', ...write, async (ctx: AppContext) => {
    const orderNumber = numberParam(ctx.params.number, 'Order');
    const { newState } = bodyOf(ctx, validators.statusUpdate);
    if (!isOrderState(newState)) throw new ProblemError(problems.noEnumConstant(newState));
    await beginWork(ctx);
    const outcome = await deps.jobs.run(
      { name: JOB.orderAction, data: { scope: { locationId: sessionOf(ctx).locationId }, orderNumber, action: { kind: 'status', newState } } },
      ctx.state,
    );
    sendOutcome(ctx, outcome);
  });

  router.post('/orders/:number/failure', ...write, async (ctx: AppContext) => {
    const orderNumber = numberParam(ctx.params.number, 'Order');
    const { reason } = bodyOf(ctx, validators.failureReport);
    await beginWork(ctx);
    if (reason) ctx.state.log.info({ orderNumber, reason }, 'failure reported');
    const outcome = await deps.jobs.run(
      { name: JOB.orderAction, data: { scope: { locationId: sessionOf(ctx).locationId }, orderNumber, action: { kind: 'failure', reason } } },
      ctx.state,
    );
    sendOutcome(ctx, outcome);
  });

  router.delete('/commands/:number', ...write, async (ctx: AppContext) => {
    const number = numberParam(ctx.params.number, 'Command');
    await beginWork(ctx);
    const command = await deps.commands.acknowledge(sessionOf(ctx).locationId, number, new Date());
    if (!command) throw new ProblemError(problems.commandNotFound());
    ctx.state.log.info({ commandNumber: number }, 'command acknowledged');
    await deps.events.commandAcknowledged(command).catch((err: unknown) => ctx.state.log.warn({ err }, 'could not offer the acknowledgement to webhooks'));
    ctx.body = toCommandRecord(command);
  });

  return router;
}
