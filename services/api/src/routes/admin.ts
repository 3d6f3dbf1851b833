import Router from '@koa/router';
import { generateApiKey, hashApiKey } from '@pos/shared/auth/keys';
import { isOrderState } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOperatorOrderRecord, toOrderRecord } from '@pos/shared/domain/records';
import { JOB } from '@pos/shared/queue/jobs';
import { validators } from '@pos/shared/schemas/requests';
import type { LocationDoc } from '@pos/shared/store/locations';
import { toLocationView } from '@pos/shared/store/locations';
import type { NewSession } from '@pos/shared/store/sessions';
import { toSessionView } from '@pos/shared/store/sessions';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { requireAdmin } from '../middleware/admin-auth';
import { idempotency } from '../middleware/idempotency';
import { bodyOf, jsonBody } from '../middleware/json-body';
import { createCommand, createOrder } from '../work/create-work';
import { numberParam, sendOutcome } from './respond';
import { serveStream } from './stream';

export const ADMIN_PREFIX = '/admin/v1';

/**
 * The restaurant administrator's API: locations, keys, counter orders, commands, recovery, and
 * what the operator's board needs: a location's event stream, its live commands, status updates
 * and acknowledgements on the location's behalf.
 */
export function adminRoutes(deps: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: ADMIN_PREFIX });
  const admin = requireAdmin(deps.adminToken);
  const json = jsonBody(deps.config.bodyLimitBytes);
  // Every write: authenticated, its body read, and safe to retry under an Idempotency-Key.
  const write = [admin, json, idempotency(deps.idempotency, () => 'admin')];

  const locationOf = async (ctx: AppContext): Promise<LocationDoc> => {
    const location = await deps.locations.find(String(ctx.params.id));
    if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
    return location;
  };

  const issueKey = async (ctx: AppContext, session: Omit<NewSession, 'keyHash'>) => {
    const apiKey = generateApiKey();
    const doc = await deps.sessions.create({ ...session, keyHash: hashApiKey(apiKey) }, new Date());
    ctx.state.log.info({ sessionId: doc._id, type: doc.type, locationId: doc.locationId }, 'session created');
    ctx.status = 201;
    // The key is shown this once; only its hash is stored.
    ctx.body = { ...toSessionView(doc), apiKey };
  };

  router.post('/locations', ...write, async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.location);
    const location = await deps.locations.create(input.name, input.failureThreshold ?? deps.config.failureThreshold, new Date());
    ctx.state.log.info({ locationId: location._id }, 'location created');
    ctx.status = 201;
    ctx.body = toLocationView(location);
  });

  router.get('/locations/:id', admin, async (ctx: AppContext) => {
    ctx.body = toLocationView(await locationOf(ctx));
  });

  router.post('/locations/:id/service-sessions', ...write, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const input = bodyOf(ctx, validators.serviceSession);
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : undefined;
    await issueKey(ctx, { type: 'SERVICE', locationId: location._id, deviceId: input.deviceId, expiresAt });
  });

  router.post('/locations/:id/customer-sessions', ...write, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const input = bodyOf(ctx, validators.customerSession);
    await issueKey(ctx, {
      type: 'CUSTOMER',
      locationId: location._id,
      userNumber: input.userNumber,
      tableNumber: input.tableNumber,
      expiresAt: new Date(Date.now() + deps.config.customerSessionTtlMs),
    });
  });

  router.delete('/sessions/:sessionId', ...write, async (ctx: AppContext) => {
    const outcome = await deps.jobs.run(
      { name: JOB.sessionClose, data: { sessionId: String(ctx.params.sessionId) } },
      ctx.state,
    );
    sendOutcome(ctx, outcome);
  });

  router.post('/locations/:id/orders', ...write, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const input = bodyOf(ctx, validators.order);
    const order = await createOrder(deps, ctx.state.log, { locationId: location._id, state: 'PLACED', ...input }, ctx.state.idempotencyId);
    ctx.state.log.info({ orderNumber: order.number }, 'counter order created');
    ctx.status = 201;
    ctx.body = toOrderRecord(order);
  });

  router.post('/locations/:id/commands', ...write, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const input = bodyOf(ctx, validators.command);
    const command = await createCommand(deps, ctx.state.log, { locationId: location._id, ...input }, ctx.state.idempotencyId);
    ctx.state.log.info({ commandNumber: command.number, kind: command.kind }, 'command created');
    ctx.status = 201;
    ctx.body = toCommandRecord(command);
  });

  router.get('/locations/:id/orders', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const state = ctx.query.state;
    if (typeof state !== 'string' || state === '') throw new ProblemError(problems.required('state'));
    if (!isOrderState(state)) throw new ProblemError(problems.noEnumConstant(state));
    // the operator's form: each order with its failure count
    ctx.body = (await deps.orders.listByState(location._id, state)).map(toOperatorOrderRecord);
  });

  // The live commands, as the register's work list shows them.
  router.get('/locations/:id/commands', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    ctx.body = (await deps.commands.listLive(location._id, new Date())).map(toCommandRecord);
  });

  // A status update on the location's behalf: the register's transition, through the same queue.
  router.put('/locations/:id/orders/:number/statusupdate', ...write, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const orderNumber = numberParam(ctx.params.number, 'Order');
    const { newState } = bodyOf(ctx, validators.statusUpdate);
    if (!isOrderState(newState)) throw new ProblemError(problems.noEnumConstant(newState));
    const outcome = await deps.jobs.run(
      { name: JOB.orderAction, data: { scope: { locationId: location._id }, orderNumber, action: { kind: 'status', newState } } },
      ctx.state,
    );
    sendOutcome(ctx, outcome);
  });

  // Acknowledging a command on the location's behalf, as a register would.
  router.delete('/locations/:id/commands/:number', ...write, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const number = numberParam(ctx.params.number, 'Command');
    const command = await deps.commands.acknowledge(location._id, number, new Date());
    if (!command) throw new ProblemError(problems.commandNotFound());
    ctx.state.log.info({ commandNumber: number }, 'command acknowledged');
    ctx.body = toCommandRecord(command);
  });

  /**
   * The location's event stream for the operator: the register stream's events, cursor, replay
   * and end (it shares their machinery), with each order's failure count.
   */
  router.get('/locations/:id/stream', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    await serveStream(ctx, deps, { kind: 'operator', locationId: location._id });
  });

  router.post('/locations/:id/orders/:number/recover', ...write, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const orderNumber = numberParam(ctx.params.number, 'Order');
    const outcome = await deps.jobs.run(
      { name: JOB.orderAction, data: { scope: { locationId: location._id }, orderNumber, action: { kind: 'recover' } } },
      ctx.state,
    );
    sendOutcome(ctx, outcome);
  });

  return router;
}
