import { hashApiKey } from '@pos/shared/auth/keys';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { OPERATOR_OPERATIONS } from '@pos/shared/openapi/operations';
import type { Logger } from '@pos/shared/log';
import { queryValidators, validators } from '@pos/shared/schemas/requests';
import type { CurrentOperator, IssuedOperator } from '@pos/shared/schemas/responses';
import { toAuditRecord } from '@pos/shared/store/audit';
import type { OperatorDoc } from '@pos/shared/store/documents';
import { toOperatorView } from '@pos/shared/store/operators';
import { isId } from '@pos/shared/store/query-values';
import { withDeadline } from '@pos/shared/util/deadline';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { operatorOfRequest } from '../middleware/admin-auth';
import { auditChange, changed, operatorFields } from '../audit/change';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { checkGrant, checkResource, listScope } from './admin-access';
import type { Handlers } from './mount';
import { queryOf, sendPage } from './pages';

/** How long a change waits to tell the nodes; the change itself is written by then. */
const CHANGE_NOTICE_TIMEOUT_MS = 2_000;

/**
 * Operator accounts (admins only) and the audit log (managers: their locations'). A token is
 * shown once, in the answer that creates or rotates it, and stored only as its hash; a change
 * that takes rights away (delete, rotate, a new role or scope) is told to every node before it
 * is answered, so the old token or rights stop everywhere at once (auth/operator-lookup.ts).
 * An admin bound to locations manages only operators within them, and grants no more than it
 * holds (routes/admin-access.ts).
 */
export function operatorHandlers(deps: ApiDeps): Handlers<typeof OPERATOR_OPERATIONS> {

  const issued = (doc: OperatorDoc, token: string): IssuedOperator => ({ ...toOperatorView(doc), token });
  const NOT_FOUND = 'Operator does not exist';
  /** The operator the path names, within the caller's scope: a 404 otherwise. */
  const targetOf = async (ctx: AppContext): Promise<OperatorDoc> => {
    const id = String(ctx.params.operatorId);
    const doc = isId(id) ? await deps.operators.find(id) : null;
    if (!doc) throw new ProblemError(problems.notFound(NOT_FOUND));
    checkResource(ctx, doc.locationIds, NOT_FOUND);
    return doc;
  };
  const tellNodes = async (operatorId: string, log: Logger): Promise<void> => {
    try {
      await withDeadline(deps.events.operatorChanged(operatorId), CHANGE_NOTICE_TIMEOUT_MS, 'Redis PUBLISH');
    } catch (err) {
      // Nodes whose subscriber lost Redis stop using their cache (its lease), and empty it on reconnect.
      log.warn({ err, operatorId }, 'could not tell the nodes of an operator change');
    }
  };

  return {
    // Who this token is: the board offers only what the role allows.
    getCurrentOperator: (ctx: AppContext) => {
      const { id, name, role, locationIds } = operatorOfRequest(ctx);
      const me: CurrentOperator = { name, role };
      if (id !== undefined) me.id = id;
      if (locationIds !== undefined) me.locationIds = [...locationIds];
      ctx.body = me;
    },

    createOperator: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.operator);
      checkGrant(ctx, { role: input.role, locations: input.locationIds ?? 'all' });
      await beginWork(ctx);
      const token = deps.newApiKey();
      const doc = await deps.operators.create({ name: input.name, role: input.role, locationIds: input.locationIds, tokenHash: hashApiKey(token) }, new Date());
      auditChange(ctx, { id: doc._id, after: operatorFields(doc) });
      ctx.state.log.info({ targetOperatorId: doc._id, role: doc.role }, 'operator created');
      ctx.status = 201;
      ctx.body = issued(doc, token);
    },

    listOperators: async (ctx: AppContext) => {
      const page = queryOf(ctx, queryValidators.idPage);
      sendPage(ctx, (await deps.operators.list(page, listScope(ctx))).map(toOperatorView), page.limit, (last) => last.id);
    },

    getOperator: async (ctx: AppContext) => {
      ctx.body = toOperatorView(await targetOf(ctx));
    },

    updateOperator: async (ctx: AppContext) => {
      const { allLocations, ...changes } = bodyOf(ctx, validators.operatorUpdate);
      if (allLocations && changes.locationIds) throw new ProblemError(problems.validation('body must not have both locationIds and allLocations'));
      const locations = allLocations ? 'all' : changes.locationIds;
      if (String(ctx.params.operatorId) === operatorOfRequest(ctx).id && (changes.role !== undefined || locations !== undefined)) {
        throw new ProblemError(problems.forbidden('An operator cannot change its own role or locations'));
      }
      checkGrant(ctx, { role: changes.role, locations });
      await beginWork(ctx);
      const before = await targetOf(ctx);
      const doc = await deps.operators.update(before._id, { ...changes, ...(allLocations && { locationIds: null }) });
      if (!doc) throw new ProblemError(problems.notFound(NOT_FOUND));
      auditChange(ctx, changed(operatorFields(before), operatorFields(doc)));
      await tellNodes(doc._id, ctx.state.log);
      ctx.state.log.info({ targetOperatorId: doc._id, role: doc.role }, 'operator updated');
      ctx.body = toOperatorView(doc);
    },

    rotateOperatorToken: async (ctx: AppContext) => {
      await beginWork(ctx);
      const token = deps.newApiKey();
      const doc = await deps.operators.rotateToken((await targetOf(ctx))._id, hashApiKey(token), new Date());
      if (!doc) throw new ProblemError(problems.notFound(NOT_FOUND));
      await tellNodes(doc._id, ctx.state.log);
      ctx.state.log.info({ targetOperatorId: doc._id }, 'operator token rotated');
      ctx.body = issued(doc, token);
    },

    deleteOperator: async (ctx: AppContext) => {
      await beginWork(ctx);
      const target = await targetOf(ctx);
      if (!(await deps.operators.remove(target._id))) throw new ProblemError(problems.notFound(NOT_FOUND));
      auditChange(ctx, { before: operatorFields(target) });
      await tellNodes(target._id, ctx.state.log);
      ctx.state.log.info({ targetOperatorId: target._id }, 'operator deleted');
      ctx.status = 204;
    },

    // Newest first; a manager (or an admin) bound to locations reads those locations' records only.
    listAudit: async (ctx: AppContext) => {
      const query = queryOf(ctx, queryValidators.audit);
      const records = await deps.audit.list(
        {
          locationId: query.locationId,
          operatorId: query.operatorId,
          from: query.from === undefined ? undefined : new Date(query.from),
          to: query.to === undefined ? undefined : new Date(query.to),
          withinLocations: listScope(ctx),
        },
        { limit: query.limit, after: query.after },
      );
      sendPage(ctx, records.map(toAuditRecord), query.limit, (last) => last.id);
    },

    // The hash chain, one stretch a call (chain-wide: an unbound admin's).
    verifyAudit: async (ctx: AppContext) => {
      const query = queryOf(ctx, queryValidators.auditVerify);
      ctx.body = await deps.audit.verify(query.after, query.limit);
    },
  };
}
