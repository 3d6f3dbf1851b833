import type { Middleware } from 'koa';
import type { Role } from '@pos/shared/auth/roles';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { LocationDoc } from '@pos/shared/store/documents';
import { isId } from '@pos/shared/store/query-values';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { allowRole, authenticateOperator, coversLocation, operatorOfRequest } from '../middleware/admin-auth';
import { auditWrites } from '../middleware/audit';
import { idempotency } from '../middleware/idempotency';
import { jsonBody } from '../middleware/json-body';

/** The middleware of one admin route, before its handler. */
export type RouteAccess = Middleware<AppState>[];

/**
 * How every admin route declares who may call it, in one word: `read('viewer')` for a read,
 * `write('manager')` for a write (docs/operators.md has the table). A read authenticates the
 * operator and checks its role; a write also records its audit entry (whatever its outcome,
 * refusals included), reads its JSON body and takes an `Idempotency-Key`, kept per operator.
 * Which locations the operator may touch is checked where the route learns the location
 * (`locationOf`, `checkLocation`): out of scope is the same 404 as missing.
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
  return {
    authenticate,
    audit,
    read: (role: Role): RouteAccess => [authenticate, allowRole(role)],
    write: (role: Role): RouteAccess => [authenticate, audit, allowRole(role), json, keyed],
  };
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
