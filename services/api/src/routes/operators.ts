import type Router from '@koa/router';
import { hashApiKey } from '@pos/shared/auth/keys';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { Logger } from '@pos/shared/log';
import { queryValidators, validators } from '@pos/shared/schemas/requests';
import type { CurrentOperator, IssuedOperator } from '@pos/shared/schemas/responses';
import { toAuditRecord } from '@pos/shared/store/audit';
import type { OperatorDoc } from '@pos/shared/store/documents';
import { toOperatorView } from '@pos/shared/store/operators';
import { isId } from '@pos/shared/store/query-values';
import { withDeadline } from '@pos/shared/util/deadline';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { operatorOfRequest } from '../middleware/admin-auth';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { adminAccess } from './admin-access';
import { queryOf, sendPage } from './pages';
import { createRouter } from './router';

/** How long a change waits to tell the nodes; the change itself is written by then. */
const CHANGE_NOTICE_TIMEOUT_MS = 2_000;

/**
 * Operator accounts (admins only) and the audit log (managers: their locations'). A token is
 * shown once, in the answer that creates or rotates it, and stored only as its hash; a change
 * that takes rights away (delete, rotate, a new role or scope) is told to every node before it
 * is answered, so the old token or rights stop everywhere at once (auth/operator-lookup.ts).
 */
export function operatorRoutes(deps: ApiDeps): Router<AppState> {
  const router = createRouter('/admin/v1');
  const { read, write } = adminAccess(deps);

  const issued = (doc: OperatorDoc, token: string): IssuedOperator => ({ ...toOperatorView(doc), token });
  const notFound = () => new ProblemError(problems.notFound('Operator does not exist'));
  const idOf = (ctx: AppContext): string => {
    const id = String(ctx.params.operatorId);
    if (!isId(id)) throw notFound();
    return id;
  };
  const tellNodes = async (operatorId: string, log: Logger): Promise<void> => {
    try {
      await withDeadline(deps.events.operatorChanged(operatorId), CHANGE_NOTICE_TIMEOUT_MS, 'Redis PUBLISH');
    } catch (err) {
      // Nodes whose subscriber lost Redis stop using their cache (its lease), and empty it on reconnect.
      log.warn({ err, operatorId }, 'could not tell the nodes of an operator change');
    }
  };

  // Who this token is: the board offers only what the role allows.
  router.get('/me', ...read('viewer'), (ctx: AppContext) => {
    const { id, name, role, locationIds } = operatorOfRequest(ctx);
    const me: CurrentOperator = { name, role };
    if (id !== undefined) me.id = id;
    if (locationIds !== undefined) me.locationIds = [...locationIds];
    ctx.body = me;
  });

  router.post('/operators', ...write('admin'), async (ctx: AppContext) => {
    const input = bodyOf(ctx, validators.operator);
    await beginWork(ctx);
    const token = deps.newApiKey();
    const doc = await deps.operators.create({ name: input.name, role: input.role, locationIds: input.locationIds, tokenHash: hashApiKey(token) }, new Date());
    ctx.state.log.info({ targetOperatorId: doc._id, role: doc.role }, 'operator created');
    ctx.status = 201;
    ctx.body = issued(doc, token);
  });

  router.get('/operators', ...read('admin'), async (ctx: AppContext) => {
    const page = queryOf(ctx, queryValidators.idPage);
    sendPage(ctx, (await deps.operators.list(page)).map(toOperatorView), page.limit, (last) => last.id);
  });

  router.get('/operators/:operatorId', ...read('admin'), async (ctx: AppContext) => {
    const doc = await deps.operators.find(idOf(ctx));
    if (!doc) throw notFound();
    ctx.body = toOperatorView(doc);
  });

  router.patch('/operators/:operatorId', ...write('admin'), async (ctx: AppContext) => {
    const { allLocations, ...changes } = bodyOf(ctx, validators.operatorUpdate);
    if (allLocations && changes.locationIds) throw new ProblemError(problems.validation('body must not have both locationIds and allLocations'));
    await beginWork(ctx);
    const doc = await deps.operators.update(idOf(ctx), { ...changes, ...(allLocations && { locationIds: null }) });
    if (!doc) throw notFound();
    await tellNodes(doc._id, ctx.state.log);
    ctx.state.log.info({ targetOperatorId: doc._id, role: doc.role }, 'operator updated');
    ctx.body = toOperatorView(doc);
  });

  router.post('/operators/:operatorId/rotate-token', ...write('admin'), async (ctx: AppContext) => {
    await beginWork(ctx);
    const token = deps.newApiKey();
    const doc = await deps.operators.rotateToken(idOf(ctx), hashApiKey(token), new Date());
    if (!doc) throw notFound();
    await tellNodes(doc._id, ctx.state.log);
    ctx.state.log.info({ targetOperatorId: doc._id }, 'operator token rotated');
    ctx.body = issued(doc, token);
  });

  router.delete('/operators/:operatorId', ...write('admin'), async (ctx: AppContext) => {
    await beginWork(ctx);
    const id = idOf(ctx);
    if (!(await deps.operators.remove(id))) throw notFound();
    await tellNodes(id, ctx.state.log);
    ctx.state.log.info({ targetOperatorId: id }, 'operator deleted');
    ctx.status = 204;
  });

  // Newest first; a manager (or an admin) bound to locations reads those locations' records only.
  router.get('/audit', ...read('manager'), async (ctx: AppContext) => {
    const query = queryOf(ctx, queryValidators.audit);
    const records = await deps.audit.list(
      {
        locationId: query.locationId,
        operatorId: query.operatorId,
        from: query.from === undefined ? undefined : new Date(query.from),
        to: query.to === undefined ? undefined : new Date(query.to),
        withinLocations: operatorOfRequest(ctx).locationIds,
      },
      { limit: query.limit, after: query.after },
    );
    sendPage(ctx, records.map(toAuditRecord), query.limit, (last) => last.id);
  });

  return router;
}
