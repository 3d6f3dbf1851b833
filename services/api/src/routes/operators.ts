import { ProblemError, problems } from '@pos/shared/domain/problem';
import { auditRecordWithin, toAuditRecord, toOperatorView } from '@pos/shared/domain/views';
import type { OPERATOR_OPERATIONS } from '@pos/shared/openapi/operations';
import { validators } from '@pos/shared/schemas/requests';
import { queryValidators } from '@pos/shared/schemas/queries';
import type { CurrentOperator, IssuedOperator } from '@pos/shared/schemas/responses';
import type { OperatorDoc } from '@pos/shared/store/documents';
import { isId } from '@pos/shared/store/query-values';
import { auditChange, auditDone, changed, operatorFields } from '../audit/change';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { operatorOfRequest } from '../middleware/admin-auth';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { OPERATOR_NOT_FOUND, type Operators } from '../services/operators';
import { checkGrant, checkResource, listScope } from './admin-access';
import type { Handlers } from './mount';
import { queryOf, sendPage } from './pages';

const issued = ({ doc, token }: { doc: OperatorDoc; token: string }): IssuedOperator => ({
  ...toOperatorView(doc),
  token,
});

/** The operator the path names, within the caller's scope: a 404 otherwise. */
async function scopedOperator(operators: Pick<Operators, 'find'>, ctx: AppContext): Promise<OperatorDoc> {
  const id = String(ctx.params.operatorId);
  const doc = isId(id) ? await operators.find(id) : null;
  if (!doc) throw new ProblemError(problems.notFound(OPERATOR_NOT_FOUND));
  checkResource(ctx, doc.locationIds, OPERATOR_NOT_FOUND);
  return doc;
}

/** Who this token is: the board offers only what the role allows. */
function currentOperator(ctx: AppContext): void {
  const { id, name, role, locationIds } = operatorOfRequest(ctx);
  const me: CurrentOperator = { name, role };
  if (id !== undefined) me.id = id;
  if (locationIds !== undefined) me.locationIds = [...locationIds];
  ctx.body = me;
}

/** An update's changes and the grant they ask for; refused with both location forms, or on the caller's own grant. */
function operatorChanges(ctx: AppContext) {
  const { allLocations, ...changes } = bodyOf(ctx, validators.operatorUpdate);
  if (allLocations && changes.locationIds)
    throw new ProblemError(problems.validation('body must not have both locationIds and allLocations'));
  const locations = allLocations ? ('all' as const) : changes.locationIds;
  if (
    String(ctx.params.operatorId) === operatorOfRequest(ctx).id &&
    (changes.role !== undefined || locations !== undefined)
  ) {
    throw new ProblemError(problems.forbidden('An operator cannot change its own role or locations'));
  }
  return {
    changes: { ...changes, ...(allLocations && { locationIds: null }) },
    grant: { role: changes.role, locations },
  };
}

/** Who a token is, and the operators within the caller's scope. */
function operatorReads(
  deps: Pick<ApiDeps, 'services'>,
): Pick<Handlers<typeof OPERATOR_OPERATIONS>, 'getCurrentOperator' | 'listOperators' | 'getOperator'> {
  const { operators } = deps.services;
  return {
    getCurrentOperator: currentOperator,

    listOperators: async (ctx: AppContext) => {
      const page = queryOf(ctx, queryValidators.idPage);
      sendPage(ctx, (await operators.list(page, listScope(ctx))).map(toOperatorView), page.limit, (last) => last.id);
    },

    getOperator: async (ctx: AppContext) => {
      ctx.body = toOperatorView(await scopedOperator(operators, ctx));
    },
  };
}

/** Operator accounts created, changed, rotated, removed. */
function operatorWrites(
  deps: Pick<ApiDeps, 'services'>,
): Pick<
  Handlers<typeof OPERATOR_OPERATIONS>,
  'createOperator' | 'updateOperator' | 'rotateOperatorToken' | 'deleteOperator'
> {
  const { operators, locations } = deps.services;
  const targetOf = (ctx: AppContext) => scopedOperator(operators, ctx);

  return {
    createOperator: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.operator);
      await checkGrant(ctx, { role: input.role, locations: input.locationIds ?? 'all' }, locations);
      await beginWork(ctx);
      const created = await operators.create(input, ctx.state.log);
      auditChange(ctx, { id: created.doc._id, after: operatorFields(created.doc) });
      ctx.status = 201;
      ctx.body = issued(created);
    },

    updateOperator: async (ctx: AppContext) => {
      const { changes, grant } = operatorChanges(ctx);
      await checkGrant(ctx, grant, locations);
      await beginWork(ctx);
      const before = await targetOf(ctx);
      const doc = await operators.update(before._id, changes, ctx.state.log);
      auditChange(ctx, changed(operatorFields(before), operatorFields(doc)));
      ctx.body = toOperatorView(doc);
    },

    rotateOperatorToken: async (ctx: AppContext) => {
      await beginWork(ctx);
      const rotated = await operators.rotateToken((await targetOf(ctx))._id, ctx.state.log);
      auditDone(ctx, rotated.doc._id, { tokenRotated: true });
      ctx.body = issued(rotated);
    },

    deleteOperator: async (ctx: AppContext) => {
      await beginWork(ctx);
      const target = await targetOf(ctx);
      await operators.remove(target._id, ctx.state.log);
      auditChange(ctx, { before: operatorFields(target) });
      ctx.status = 204;
    },
  };
}

/** The audit log and its chain's check. */
function auditRecords(
  deps: Pick<ApiDeps, 'services'>,
): Pick<Handlers<typeof OPERATOR_OPERATIONS>, 'listAudit' | 'verifyAudit'> {
  const { auditLog } = deps.services;

  return {
    // Newest first; a manager (or an admin) bound to locations reads those locations' records only.
    listAudit: async (ctx: AppContext) => {
      const query = queryOf(ctx, queryValidators.audit);
      const scope = listScope(ctx);
      sendPage(
        ctx,
        (await auditLog.list(query, scope)).map((doc) => auditRecordWithin(toAuditRecord(doc), scope)),
        query.limit,
        (last) => last.id,
      );
    },

    // The hash chain, one stretch a call (chain-wide: an unbound admin's).
    verifyAudit: async (ctx: AppContext) => {
      const query = queryOf(ctx, queryValidators.auditVerify);
      ctx.body = await auditLog.verify(query.after, query.limit);
    },
  };
}

/**
 * Operator accounts (admins) and the audit log (managers: their locations'). An admin bound to
 * locations manages only operators within them, and grants no more than it holds (admin-access.ts).
 */
export function operatorHandlers(deps: Pick<ApiDeps, 'services'>): Handlers<typeof OPERATOR_OPERATIONS> {
  return { ...operatorReads(deps), ...operatorWrites(deps), ...auditRecords(deps) };
}
