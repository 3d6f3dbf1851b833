import type { Middleware, Next } from 'koa';
import { CHAIN_WIDE_DETAIL, coversAll, coversLocation, Grant, grantRefusal, isBound } from '@pos/shared/auth/scope';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { OPERATIONS, OperationSpec } from '@pos/shared/openapi/operations';
import type { LocationDoc } from '@pos/shared/store/documents';
import { isId } from '@pos/shared/store/query-values';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { allowRole, authenticateOperator, operatorOfRequest } from '../middleware/admin-auth';
import { auditWrites } from '../middleware/audit';
import { idempotency } from '../middleware/idempotency';
import { jsonBody } from '../middleware/json-body';

/** The middleware of one admin route, before its handler. */
export type RouteAccess = Middleware<AppState>[];

/** An admin or board operation of the table, with its role and what a bound operator may do. */
export type AdminOperation = OperationSpec & Required<Pick<OperationSpec, 'role' | 'bound'>>;

/** The table's entry `id`: an operator operation, with its role and bound access (a missing one fails at start-up). */
export function adminOperation(id: string): AdminOperation {
  const spec = OPERATIONS.find((op) => op.id === id);
  if (!spec || (spec.access !== 'admin' && spec.access !== 'board') || !spec.role || !spec.bound) throw new Error(`no operator operation ${id} with a role and bound access`);
  return spec as AdminOperation;
}

/** A 403 for an operator bound to locations on a chain-wide operation. */
export function allowBound(spec: Pick<AdminOperation, 'bound'>) {
  return async function allowScope(ctx: AppContext, next: Next): Promise<void> {
    if (spec.bound === 'chain' && isBound(operatorOfRequest(ctx))) throw new ProblemError(problems.forbidden(CHAIN_WIDE_DETAIL));
    await next();
  };
}

/**
 * How every operator route is let in: by its entry in the operation table (`operation('pauseLocation')`),
 * which gives its role and what an operator bound to locations may do with it (docs/operators.md
 * has the table). A read authenticates the operator and checks both; a write also records its
 * audit entry (whatever its outcome, refusals included), reads its JSON body and takes an
 * `Idempotency-Key`, kept per operator. Where an operation reaches locations, the route's lookups
 * below apply the same scope: another location's resource is the same 404 as a missing one.
 */
export function adminAccess(deps: ApiDeps) {
  const authenticate = authenticateOperator(deps);
  const audit = auditWrites({ audit: deps.audit, retentionMs: deps.config.audit.retentionMs, writes: deps.metrics.auditWrites });
  const json = jsonBody(deps.config.http.bodyLimitBytes);
  // Each operator's kept answers are its own: one operator never replays another's (an issued key).
  const keyed = idempotency(deps.idempotency, (ctx) => {
    const operator = operatorOfRequest(ctx);
    return { scope: operator.id ? `operator:${operator.id}` : 'admin', maxRecords: deps.config.idempotency.maxRecords };
  });
  const operation = (id: string): RouteAccess => {
    const spec = adminOperation(id);
    const checks = [allowRole(spec.role), allowBound(spec)];
    return spec.method === 'get' ? [authenticate, ...checks] : [authenticate, audit, ...checks, json, keyed];
  };
  return { authenticate, audit, operation };
}

/**
 * A 404 (the missing record's own, `detail`) unless the operator covers the location, which the
 * write's audit record names either way.
 */
export function checkLocation(ctx: AppContext, locationId: string, detail = 'Location does not exist'): void {
  // named in the audit record even when refused: an attempt on a location is that location's
  ctx.state.auditLocationId = locationId;
  if (!coversLocation(operatorOfRequest(ctx), locationId)) throw new ProblemError(problems.notFound(detail));
}

/** A write on a resource of one location is that location's in the audit log (its operators read it there). */
function auditLocations(ctx: AppContext, locationIds: readonly string[] | undefined): void {
  if (locationIds?.length === 1) ctx.state.auditLocationId ??= locationIds[0];
}

/**
 * A 404 (`detail`, the missing resource's) unless the operator covers every location of a
 * resource bound to `locationIds` (an operator account, a webhook subscription; absent: all).
 */
export function checkResource(ctx: AppContext, locationIds: readonly string[] | undefined, detail: string): void {
  auditLocations(ctx, locationIds);
  if (!coversAll(operatorOfRequest(ctx), locationIds)) throw new ProblemError(problems.notFound(detail));
}

/** A 403 unless the operator may grant `grant`: no role above its own, no location outside its own. */
export function checkGrant(ctx: AppContext, grant: Grant): void {
  if (Array.isArray(grant.locations)) auditLocations(ctx, grant.locations);
  const refusal = grantRefusal(operatorOfRequest(ctx), grant);
  if (refusal) throw new ProblemError(problems.forbidden(refusal));
}

/** The locations a list may show: the operator's own, or undefined (all) for an unbound one. */
export function listScope(ctx: AppContext): readonly string[] | undefined {
  return operatorOfRequest(ctx).locationIds;
}

/** The location the path's `:id` names: a 404 when it does not exist or is outside the operator's scope (then without a read). */
export async function locationOf(ctx: AppContext, deps: Pick<ApiDeps, 'locations'>): Promise<LocationDoc> {
  const id = String(ctx.params.id);
  // A malformed id names no location: no read for it.
  if (!isId(id)) throw new ProblemError(problems.notFound('Location does not exist'));
  checkLocation(ctx, id);
  const location = await deps.locations.find(id);
  if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
  return location;
}
