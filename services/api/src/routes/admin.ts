import type Router from '@koa/router';
import { hashApiKey } from '@pos/shared/auth/keys';
import { isOrderState } from '@pos/shared/domain/order-state';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toCommandRecord, toOperatorOrderRecord, toOrderRecord } from '@pos/shared/domain/records';
import { JOB } from '@pos/shared/queue/jobs';
import { queryValidators, validators } from '@pos/shared/schemas/requests';
import type { RotatedSession } from '@pos/shared/schemas/responses';
import { encodeHistoryCursor, parseHistoryQuery } from '@pos/shared/schemas/history';
import type { LocationDoc } from '@pos/shared/store/locations';
import { toLocationView } from '@pos/shared/store/locations';
import { isId } from '@pos/shared/store/query-values';
import type { NewSession, SessionDoc } from '@pos/shared/store/sessions';
import { toSessionView } from '@pos/shared/store/sessions';
import { withDeadline } from '@pos/shared/util/deadline';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { requireAdmin } from '../middleware/admin-auth';
import { beginWork, idempotency } from '../middleware/idempotency';
import { bodyOf, jsonBody } from '../middleware/json-body';
import { createCommand, createOrder } from '../work/create-work';
import { linkNext, queryOf, sendPage } from './pages';
import { numberParam, sendOutcome } from './respond';
import { createRouter } from './router';
import { serveStream } from './stream';

/** How long a key rotation waits to tell the nodes' streams; the rotation itself is written by then. */
const ROTATION_NOTICE_TIMEOUT_MS = 2_000;

export const ADMIN_PREFIX = '/admin/v1';

/**
 * The restaurant administrator's API: locations, sessions and their keys, counter orders,
 * commands, recovery, paged lists of each, and what the operator's board needs: a location's
 * event stream, status updates and acknowledgements on the location's behalf.
 */
export function adminRoutes(deps: ApiDeps): Router<AppState> {
  const router = createRouter(ADMIN_PREFIX);
  const admin = requireAdmin(deps.adminToken);
  const json = jsonBody(deps.config.http.bodyLimitBytes);
  // Every write: authenticated, its body read, and safe to retry under an Idempotency-Key (each
  // handler calls beginWork once its path and body are checked; finding the location is work).
  const write = [admin, json, idempotency(deps.idempotency, () => ({ scope: 'admin', maxRecords: deps.config.idempotency.maxRecords }))];

  const locationOf = async (ctx: AppContext): Promise<LocationDoc> => {
    // A malformed id names no location: no read for it.
    const location = isId(ctx.params.id) ? await deps.locations.find(ctx.params.id) : null;
    if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
    return location;
  };

  const issueKey = async (ctx: AppContext, session: Omit<NewSession, 'keyHash'>) => {
    const apiKey = deps.newApiKey();
    const doc = await deps.sessions.create({ ...session, keyHash: hashApiKey(apiKey) }, new Date());
    ctx.state.log.info({ sessionId: doc._id, type: doc.type, locationId: doc.locationId }, 'session created');
    ctx.status = 201;
    // The key is shown this once; only its hash is stored.
    ctx.body = { ...toSessionView(doc), apiKey };
  };

  /**
   * Nodes drop their cached copy of the session (the old key's grace starts now), and streams
   * opened with the old key end when that grace does. A failure here must not lose the new key.
   */
  const tellStreams = async (ctx: AppContext, session: SessionDoc) => {
    try {
      const notices = Promise.all([deps.events.sessionChanged(session._id), deps.events.keyRotated(session.locationId, session._id)]);
      await withDeadline(notices, ROTATION_NOTICE_TIMEOUT_MS, 'Redis PUBLISH');
    } catch (err) {
      // Streams re-read their session after a Redis reconnect, and judge their key then.
      ctx.state.log.warn({ err, sessionId: session._id }, 'could not tell the streams of a key rotation');
    }
  };

  router.post('/locations', ...write, async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.location);
    await beginWork(ctx);
    const location = await deps.locations.create(input.name, input.failureThreshold ?? deps.config.orders.failureThreshold, new Date());
    ctx.state.log.info({ locationId: location._id }, 'location created');
    ctx.status = 201;
    ctx.body = toLocationView(location);
  });

  router.get('/locations', admin, async (ctx: AppContext) => {
    const page = queryOf(ctx, queryValidators.idPage);
    sendPage(ctx, (await deps.locations.list(page)).map(toLocationView), page.limit, (last) => last.id);
  });

  router.get('/locations/:id', admin, async (ctx: AppContext) => {
    ctx.body = toLocationView(await locationOf(ctx));
  });

  router.patch('/locations/:id', ...write, async (ctx: AppContext) => {
    const changes = bodyOf(ctx, validators.locationUpdate);
    await beginWork(ctx);
    const location = await deps.locations.update(String(ctx.params.id), changes);
    if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
    // The worker reads the threshold for each failure report: the change holds from the next one.
    ctx.state.log.info({ locationId: location._id, changes }, 'location updated');
    ctx.body = toLocationView(location);
  });

  router.get('/locations/:id/sessions', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const page = queryOf(ctx, queryValidators.idPage);
    sendPage(ctx, (await deps.sessions.listByLocation(location._id, page)).map(toSessionView), page.limit, (last) => last.sessionId);
  });

  router.post('/locations/:id/service-sessions', ...write, async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.serviceSession);
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : undefined;
    await beginWork(ctx);
    const location = await locationOf(ctx);
    await issueKey(ctx, { type: 'SERVICE', locationId: location._id, deviceId: input.deviceId, expiresAt });
  });

  router.post('/locations/:id/customer-sessions', ...write, async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.customerSession);
    await beginWork(ctx);
    const location = await locationOf(ctx);
    await issueKey(ctx, {
      type: 'CUSTOMER',
      locationId: location._id,
      userNumber: input.userNumber,
      tableNumber: input.tableNumber,
      expiresAt: new Date(Date.now() + deps.config.auth.customerSessionTtlMs),
    });
  });

  router.post('/sessions/:sessionId/rotate-key', ...write, async (ctx: AppContext) => {
    const { sessionId } = ctx.params;
    await beginWork(ctx);
    const session = isId(sessionId) ? await deps.sessions.find(sessionId) : null;
    if (!session) throw new ProblemError(problems.notFound('Session does not exist'));
    if (session.closedAt) throw new ProblemError(problems.conflict('Session is closed; its key cannot be rotated'));
    const apiKey = deps.newApiKey();
    const rotated = await deps.sessions.rotateKey(session, hashApiKey(apiKey), new Date(), deps.config.auth.keyRotationGraceMs);
    if (!rotated) throw new ProblemError(problems.conflict('Session was closed or its key rotated meanwhile; read it again'));
    ctx.state.log.info({ sessionId, previousKeyExpiresAt: rotated.previousKeyExpiresAt }, 'session key rotated');
    await tellStreams(ctx, rotated);
    // The new key is shown this once; only its hash is stored.
    ctx.body = { ...toSessionView(rotated), apiKey } as RotatedSession;
  });

  router.delete('/sessions/:sessionId', ...write, async (ctx: AppContext) => {
    const { sessionId } = ctx.params;
    await beginWork(ctx);
    if (!isId(sessionId)) throw new ProblemError(problems.notFound('Session does not exist'));
    const outcome = await deps.jobs.run({ name: JOB.sessionClose, data: { sessionId } }, ctx.state);
    sendOutcome(ctx, outcome);
  });

  router.post('/locations/:id/orders', ...write, async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.order);
    await beginWork(ctx);
    const location = await locationOf(ctx);
    const order = await createOrder(deps, ctx.state.log, { locationId: location._id, state: 'PLACED', ...input }, ctx.state.idempotencyId);
    ctx.state.log.info({ orderNumber: order.number }, 'counter order created');
    ctx.status = 201;
    ctx.body = toOrderRecord(order);
  });

  router.post('/locations/:id/commands', ...write, async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.command);
    await beginWork(ctx);
    const location = await locationOf(ctx);
    const command = await createCommand(deps, ctx.state.log, { locationId: location._id, ...input }, ctx.state.idempotencyId);
    ctx.state.log.info({ commandNumber: command.number, kind: command.kind }, 'command created');
    ctx.status = 201;
    ctx.body = toCommandRecord(command);
  });

  router.get('/locations/:id/commands', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const page = queryOf(ctx, queryValidators.numberPage);
    const commands = await deps.commands.listLive(location._id, new Date(), page.after, page.limit);
    sendPage(ctx, commands.map(toCommandRecord), page.limit, (last) => last.number);
  });

  router.get('/locations/:id/orders', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const state = ctx.query.state;
    // the register interface's wording for a missing or unknown state name
    if (typeof state !== 'string' || state === '') throw new ProblemError(problems.required('state'));
    if (!isOrderState(state)) throw new ProblemError(problems.noEnumConstant(state));
    const page = queryOf(ctx, queryValidators.orderList);
    const orders = await deps.orders.listByState(location._id, page.state, page.after, page.limit);
    // the operator's form: each order with its failure count
    sendPage(ctx, orders.map(toOperatorOrderRecord), page.limit, (last) => last.number);
  });

  // A status update on the location's behalf: the register's transition, through the same queue.
  router.put('/locations/:id/orders/:number/statusupdate', ...write, async (ctx: AppContext) => {
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
  router.delete('/locations/:id/commands/:number', ...write, async (ctx: AppContext) => {
    const number = numberParam(ctx.params.number, 'Command');
    await beginWork(ctx);
    const location = await locationOf(ctx);
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

  // Finished orders once archived (ORDER_ARCHIVE_AFTER after they finished), by completion time.
  router.get('/locations/:id/history', admin, async (ctx: AppContext) => {
    const location = await locationOf(ctx);
    const page = await deps.archive.history({ locationId: location._id, ...parseHistoryQuery(ctx.query) });
    // a bare array, paged like the other lists (its cursor is opaque: completion time and number)
    linkNext(ctx, page.next && encodeHistoryCursor(page.next));
    ctx.body = page.orders.map(toOrderRecord);
  });

  router.post('/locations/:id/orders/:number/recover', ...write, async (ctx: AppContext) => {
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
