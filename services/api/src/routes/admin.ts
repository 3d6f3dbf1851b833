import type Router from '@koa/router';
import { isOrderState } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOperatorOrderRecord, toOrderRecord } from '@pos/shared/domain/records';
import { JOB } from '@pos/shared/queue/jobs';
import { queryValidators, validators } from '@pos/shared/schemas/requests';
import { encodeHistoryCursor, parseHistoryQuery } from '@pos/shared/schemas/history';
import type { LocationDoc, SessionDoc } from '@pos/shared/store/documents';
import { toLocationView } from '@pos/shared/store/locations';
import { isId } from '@pos/shared/store/query-values';
import type { LocationChange } from '@pos/shared/events/location-events';
import { readPresence } from '@pos/shared/presence/presence-store';
import { toSessionView } from '@pos/shared/store/sessions';
import { SessionKeys } from '../auth/session-keys';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { operatorOfRequest } from '../middleware/admin-auth';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { createCommand, createOrder } from '../work/create-work';
import { adminAccess, checkLocation, locationOf as scopedLocation } from './admin-access';
import { linkNext, queryOf, sendPage } from './pages';
import { numberParam, sendOutcome } from './respond';
import { createRouter } from './router';
import { serveStream } from './stream';

export const ADMIN_PREFIX = '/admin/v1';

/**
 * The restaurant administrator's API: locations, sessions and their keys, counter orders,
 * commands, recovery, paged lists of each, and what the operator's board needs: a location's
 * event stream, status updates and acknowledgements on the location's behalf.
 */
export function adminRoutes(deps: ApiDeps): Router<AppState> {
  const router = createRouter(ADMIN_PREFIX);
  // Each route's role, in one word (admin-access.ts). Every write is audited, its body read, and
  // safe to retry under an Idempotency-Key (each handler calls beginWork once its path and body
  // are checked; finding the location is work).
  const { operation } = adminAccess(deps);
  const locationOf = (ctx: AppContext): Promise<LocationDoc> => scopedLocation(ctx, deps);

  /** The session the path names, in the operator's scope: a 404 otherwise. */
  const sessionOf = async (ctx: AppContext): Promise<SessionDoc> => {
    const sessionId = String(ctx.params.sessionId);
    const session = isId(sessionId) ? await deps.sessions.find(sessionId) : null;
    if (!session) throw new ProblemError(problems.notFound('Session does not exist'));
    checkLocation(ctx, session.locationId, 'Session does not exist');
    return session;
  };

  /** The change is stored: a lost announcement must not fail the request (the board reads the location again). */
  const announceLocation = async (ctx: AppContext, location: LocationDoc, change: LocationChange): Promise<void> => {
    try {
      await deps.events.location(location, change);
    } catch (err) {
      ctx.state.log.warn({ err, change }, 'could not announce the location change');
    }
  };

  const keys = new SessionKeys({
    sessions: deps.sessions,
    events: deps.events,
    newApiKey: deps.newApiKey,
    keyRotationGraceMs: deps.config.auth.keyRotationGraceMs,
  });

  router.post('/locations', ...operation('createLocation'), async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.location);
    await beginWork(ctx);
    const location = await deps.locations.create(input.name, input.failureThreshold ?? deps.config.orders.failureThreshold, new Date());
    ctx.state.log.info({ locationId: location._id }, 'location created');
    ctx.status = 201;
    ctx.body = toLocationView(location);
  });

  router.get('/locations', ...operation('listLocations'), async (ctx: AppContext) => {
    const page = queryOf(ctx, queryValidators.locationList);
    const now = new Date();
    // only the locations the operator covers
    const locations = await deps.locations.list(page, { within: operatorOfRequest(ctx).locationIds, online: page.online });
    sendPage(ctx, locations.map((doc) => toLocationView(doc, now)), page.limit, (last) => last.id);
  });

  router.get('/locations/:id', ...operation('getLocation'), async (ctx: AppContext) => {
    ctx.body = toLocationView(await locationOf(ctx));
  });

  // The registers seen within PRESENCE_WINDOW, read from Redis as the nodes wrote them.
  router.get('/locations/:id/presence', ...operation('getLocationPresence'), async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const now = Date.now();
    const presence = await readPresence(deps.redis, deps.config.redis.prefix, location._id, deps.config.presence.windowMs, now);
    // The announced state's start while it agrees; a change not yet announced (the worker's
    // sweep does, within a quarter of the window) is seen now.
    const since = presence.online === (location.online === true) ? (location.onlineSince ?? location.createdAt) : new Date(now);
    ctx.body = { online: presence.online, since: since.toISOString(), registers: presence.registers };
  });

  router.put('/locations/:id/pause', ...operation('pauseLocation'), async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.pause);
    const now = new Date();
    const until = input.until === undefined ? undefined : new Date(input.until);
    if (until && until <= now) throw new ProblemError(problems.validation('until must be in the future'));
    await beginWork(ctx);
    checkLocation(ctx, String(ctx.params.id));
    const location = isId(ctx.params.id) ? await deps.locations.pause(ctx.params.id, { until, reason: input.reason }, now) : null;
    if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
    ctx.state.log.info({ locationId: location._id, until, reason: input.reason }, 'location paused');
    await announceLocation(ctx, location, 'paused');
    ctx.body = toLocationView(location, now);
  });

  router.delete('/locations/:id/pause', ...operation('resumeLocation'), async (ctx: AppContext) => {
    await beginWork(ctx);
    const location = await locationOf(ctx);
    const resumed = await deps.locations.resume(location._id);
    if (resumed) {
      ctx.state.log.info({ locationId: location._id }, 'location resumed');
      await announceLocation(ctx, resumed, 'resumed');
    }
    ctx.body = toLocationView(resumed ?? location);
  });

  router.patch('/locations/:id', ...operation('updateLocation'), async (ctx: AppContext) => {
    const changes = bodyOf(ctx, validators.locationUpdate);
    await beginWork(ctx);
    checkLocation(ctx, String(ctx.params.id));
    const location = await deps.locations.update(String(ctx.params.id), changes);
    if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
    // The worker reads the threshold for each failure report: the change holds from the next one.
    ctx.state.log.info({ locationId: location._id, changes }, 'location updated');
    ctx.body = toLocationView(location);
  });

  router.get('/locations/:id/sessions', ...operation('listSessions'), async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const page = queryOf(ctx, queryValidators.idPage);
    sendPage(ctx, (await deps.sessions.listByLocation(location._id, page)).map(toSessionView), page.limit, (last) => last.sessionId);
  });

  router.post('/locations/:id/service-sessions', ...operation('createServiceSession'), async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.serviceSession);
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : undefined;
    await beginWork(ctx);
    const location = await locationOf(ctx);
    ctx.body = await keys.issue({ type: 'SERVICE', locationId: location._id, deviceId: input.deviceId, expiresAt }, ctx.state.log);
    ctx.status = 201;
  });

  router.post('/locations/:id/customer-sessions', ...operation('createCustomerSession'), async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.customerSession);
    await beginWork(ctx);
    const location = await locationOf(ctx);
    const expiresAt = new Date(Date.now() + deps.config.auth.customerSessionTtlMs);
    ctx.body = await keys.issue({ type: 'CUSTOMER', locationId: location._id, userNumber: input.userNumber, tableNumber: input.tableNumber, expiresAt }, ctx.state.log);
    ctx.status = 201;
  });

  router.post('/sessions/:sessionId/rotate-key', ...operation('rotateSessionKey'), async (ctx: AppContext) => {
    await beginWork(ctx);
    ctx.body = await keys.rotate(await sessionOf(ctx), ctx.state.log);
  });

  router.delete('/sessions/:sessionId', ...operation('closeSession'), async (ctx: AppContext) => {
    await beginWork(ctx);
    const { _id: sessionId } = await sessionOf(ctx);
    const outcome = await deps.jobs.run({ name: JOB.sessionClose, data: { sessionId } }, ctx.state);
    sendOutcome(ctx, outcome);
  });

  router.post('/locations/:id/orders', ...operation('createCounterOrder'), async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.order);
    await beginWork(ctx);
    const location = await locationOf(ctx);
    const order = await createOrder(deps, ctx.state.log, { locationId: location._id, state: 'PLACED', ...input }, ctx.state.idempotencyId);
    ctx.state.log.info({ orderNumber: order.number }, 'counter order created');
    ctx.status = 201;
    ctx.body = toOrderRecord(order);
  });

  router.post('/locations/:id/commands', ...operation('createCommand'), async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.command);
    await beginWork(ctx);
    const location = await locationOf(ctx);
    const command = await createCommand(deps, ctx.state.log, { locationId: location._id, ...input }, ctx.state.idempotencyId);
    ctx.state.log.info({ commandNumber: command.number, kind: command.kind }, 'command created');
    ctx.status = 201;
    ctx.body = toCommandRecord(command);
  });

  router.get('/locations/:id/commands', ...operation('listCommands'), async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const page = queryOf(ctx, queryValidators.numberPage);
    const commands = await deps.commands.listLive(location._id, new Date(), page.after, page.limit);
    sendPage(ctx, commands.map(toCommandRecord), page.limit, (last) => last.number);
  });

  router.get('/locations/:id/orders', ...operation('listOrders'), async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const state = ctx.query.state;
    // the register interface's wording for a missing or unknown state name
    if (typeof state !== 'string' || state === '') throw new ProblemError(problems.required('state'));
    if (!isOrderState(state)) throw new ProblemError(problems.noEnumConstant(state));
    const page = queryOf(ctx, queryValidators.orderList);
    const orders = await deps.orders.listByState(location._id, page.state, page.after, page.limit, page.overdue);
    // the operator's form: each order with its failure count
    sendPage(ctx, orders.map(toOperatorOrderRecord), page.limit, (last) => last.number);
  });

  // A status update on the location's behalf: the register's transition, through the same queue.
  router.put('/locations/:id/orders/:number/statusupdate', ...operation('updateOrderStatusForLocation'), async (ctx: AppContext) => {
    const orderNumber = numberParam(ctx.params.number, 'Order');
    const { newState } = bodyOf(ctx, validators.statusUpdate);
    if (!isOrderState(newState)) throw new ProblemError(problems.noEnumConstant(newState));
    await beginWork(ctx);
    const location = await locationOf(ctx);
    const outcome = await deps.jobs.run(
      { name: JOB.orderAction, data: { scope: { locationId: location._id }, orderNumber, action: { kind: 'status', newState } } },
      ctx.state,
    );
    sendOutcome(ctx, outcome);
  });

  // Acknowledging a command on the location's behalf, as a register would.
  router.delete('/locations/:id/commands/:number', ...operation('acknowledgeCommandForLocation'), async (ctx: AppContext) => {
    const number = numberParam(ctx.params.number, 'Command');
    await beginWork(ctx);
    const location = await locationOf(ctx);
    const command = await deps.commands.acknowledge(location._id, number, new Date());
    if (!command) throw new ProblemError(problems.commandNotFound());
    ctx.state.log.info({ commandNumber: number }, 'command acknowledged');
    await deps.events.commandAcknowledged(command).catch((err: unknown) => ctx.state.log.warn({ err }, 'could not offer the acknowledgement to webhooks'));
    ctx.body = toCommandRecord(command);
  });

  /**
   * The location's event stream for the operator: the register stream's events, cursor, replay
   * and end (it shares their machinery), with each order's failure count.
   */
  router.get('/locations/:id/stream', ...operation('streamLocationWork'), async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    await serveStream(ctx, deps, { kind: 'operator', locationId: location._id, operatorId: operatorOfRequest(ctx).id });
  });

  // Finished orders once archived (ORDER_ARCHIVE_AFTER after they finished), by completion time.
  router.get('/locations/:id/history', ...operation('orderHistory'), async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const page = await deps.archive.history({ locationId: location._id, ...parseHistoryQuery(ctx.query) });
    // a bare array, paged like the other lists (its cursor is opaque: completion time and number)
    linkNext(ctx, page.next && encodeHistoryCursor(page.next));
    ctx.body = page.orders.map(toOrderRecord);
  });

  router.post('/locations/:id/orders/:number/recover', ...operation('recoverOrder'), async (ctx: AppContext) => {
    const orderNumber = numberParam(ctx.params.number, 'Order');
    await beginWork(ctx);
    const location = await locationOf(ctx);
    const outcome = await deps.jobs.run(
      { name: JOB.orderAction, data: { scope: { locationId: location._id }, orderNumber, action: { kind: 'recover' } } },
      ctx.state,
    );
    sendOutcome(ctx, outcome);
  });

  return router;
}
