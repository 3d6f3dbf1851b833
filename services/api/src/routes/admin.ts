import Router from '@koa/router';
import { generateApiKey, hashApiKey } from '@pos/shared/auth/keys';
import { isOrderState } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOrderRecord } from '@pos/shared/domain/records';
import { JOB } from '@pos/shared/queue/jobs';
import { parseHistoryQuery, toHistoryPageRecord } from '@pos/shared/schemas/history';
import { validators } from '@pos/shared/schemas/requests';
import type { LocationDoc } from '@pos/shared/store/locations';
import { toLocationView } from '@pos/shared/store/locations';
import type { NewSession } from '@pos/shared/store/sessions';
import { toSessionView } from '@pos/shared/store/sessions';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { requireAdmin } from '../middleware/admin-auth';
import { bodyOf, jsonBody } from '../middleware/json-body';
import { createCommand, createOrder } from '../work/create-work';
import { numberParam, sendOutcome } from './respond';

export const ADMIN_PREFIX = '/admin/v1';

/** The restaurant administrator's API: locations, keys, counter orders, commands, recovery. */
export function adminRoutes(deps: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: ADMIN_PREFIX });
  const admin = requireAdmin(deps.adminToken);
  const json = jsonBody(deps.config.bodyLimitBytes);

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

  router.post('/locations', admin, json, async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.location);
    const location = await deps.locations.create(input.name, input.failureThreshold ?? deps.config.failureThreshold, new Date());
    ctx.state.log.info({ locationId: location._id }, 'location created');
    ctx.status = 201;
    ctx.body = toLocationView(location);
  });

  router.get('/locations/:id', admin, async (ctx: AppContext) => {
    ctx.body = toLocationView(await locationOf(ctx));
  });

  router.post('/locations/:id/service-sessions', admin, json, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const input = bodyOf(ctx, validators.serviceSession);
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : undefined;
    await issueKey(ctx, { type: 'SERVICE', locationId: location._id, deviceId: input.deviceId, expiresAt });
  });

  router.post('/locations/:id/customer-sessions', admin, json, async (ctx: AppContext) => {
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

  router.delete('/sessions/:sessionId', admin, async (ctx: AppContext) => {
    const outcome = await deps.jobs.run(
      { name: JOB.sessionClose, data: { sessionId: String(ctx.params.sessionId) } },
      ctx.state.requestId,
    );
    sendOutcome(ctx, outcome);
  });

  router.post('/locations/:id/orders', admin, json, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const input = bodyOf(ctx, validators.order);
    const order = await createOrder(deps, ctx.state.log, { locationId: location._id, state: 'PLACED', ...input });
    ctx.state.log.info({ orderNumber: order.number }, 'counter order created');
    ctx.status = 201;
    ctx.body = toOrderRecord(order);
  });

  router.post('/locations/:id/commands', admin, json, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const input = bodyOf(ctx, validators.command);
    const command = await createCommand(deps, ctx.state.log, { locationId: location._id, ...input });
    ctx.state.log.info({ commandNumber: command.number, kind: command.kind }, 'command created');
    ctx.status = 201;
    ctx.body = toCommandRecord(command);
  });

  router.get('/locations/:id/orders', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const state = ctx.query.state;
    if (typeof state !== 'string' || state === '') throw new ProblemError(problems.required('state'));
    if (!isOrderState(state)) throw new ProblemError(problems.noEnumConstant(state));
    ctx.body = (await deps.orders.listByState(location._id, state)).map(toOrderRecord);
  });

  // Finished orders once archived (ORDER_ARCHIVE_AFTER after they finished), by completion time.
  router.get('/locations/:id/history', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const query = parseHistoryQuery(ctx.query);
    ctx.body = toHistoryPageRecord(await deps.archive.history({ locationId: location._id, ...query }));
  });

  router.post('/locations/:id/orders/:number/recover', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const orderNumber = numberParam(ctx.params.number, 'Order');
    const outcome = await deps.jobs.run(
      { name: JOB.orderAction, data: { scope: { locationId: location._id }, orderNumber, action: { kind: 'recover' } } },
      ctx.state.requestId,
    );
    sendOutcome(ctx, outcome);
  });

  return router;
}
