import type { Next } from 'koa';
import {
  BoundAccess,
  CHAIN_WIDE_DETAIL,
  coversAll,
  coversLocation,
  Grant,
  grantRefusal,
  isBound,
} from '@pos/shared/auth/scope';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { operation, type OperationId, type OperationSpec } from '@pos/shared/openapi/operations';
import type { LocationDoc } from '@pos/shared/store/documents';
import type { Locations } from '../services/locations';
import { isId } from '@pos/shared/store/query-values';
import type { AppContext } from '../context';
import { operatorOfRequest } from '../middleware/admin-auth';

/** An operator operation of the table, with its role and what a bound operator may do. */
export type AdminOperation = OperationSpec & Required<Pick<OperationSpec, 'role' | 'bound'>>;

/** The table's entry `id`: an operator operation, with its role and bound access (checked at start-up). */
export function adminOperation(id: OperationId): AdminOperation {
  const spec = operation(id);
  if ((spec.access !== 'admin' && spec.access !== 'board') || !spec.role || !spec.bound)
    throw new Error(`operation ${id} has no role or bound access`);
  return spec as AdminOperation;
}

/** A 403 for an operator bound to locations on a chain-wide operation (the pipeline's, after the role's check). */
export function allowBound(bound: BoundAccess) {
  return async function allowScope(ctx: AppContext, next: Next): Promise<void> {
    if (bound === 'chain' && isBound(operatorOfRequest(ctx)))
      throw new ProblemError(problems.forbidden(CHAIN_WIDE_DETAIL));
    await next();
  };
}

/*
 * Where an operation reaches locations, a route's look-ups apply the operator's scope (docs/operators.md):
 * another location's resource is the same 404 as a missing one, a grant beyond the operator's own a 403.
 */

/**
 * A 404 (the missing record's own, `detail`) unless the operator covers the location, which the
 * write's audit record then names (a refused attempt's record names none: middleware/audit.ts).
 */
export function checkLocation(ctx: AppContext, locationId: string, detail = 'Location does not exist'): void {
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

/**
 * A 403 unless the operator may grant `grant` (no role above its own, no location outside its
 * own), then a 404 naming a location of the grant that does not exist: a subscription or an
 * account for a location that is not there could never act. One read, when it names locations.
 */
export async function checkGrant(ctx: AppContext, grant: Grant, locations: Pick<Locations, 'missing'>): Promise<void> {
  if (Array.isArray(grant.locations)) auditLocations(ctx, grant.locations);
  const refusal = grantRefusal(operatorOfRequest(ctx), grant);
  if (refusal) throw new ProblemError(problems.forbidden(refusal));
  if (!Array.isArray(grant.locations) || grant.locations.length === 0) return;
  const [missing] = await locations.missing(grant.locations);
  if (missing !== undefined) throw new ProblemError(problems.unknownLocation(missing));
}

/** The locations a list may show: the operator's own, or undefined (all) for an unbound one. */
export function listScope(ctx: AppContext): readonly string[] | undefined {
  return operatorOfRequest(ctx).locationIds;
}

/**
 * The location the path's `:id` names: a 404 when it does not exist or is
 * outside the operator's scope (then without a read).
 */
export async function locationOf(
  ctx: AppContext,
  locations: { find(id: string): Promise<LocationDoc | null> },
): Promise<LocationDoc> {
  const id = String(ctx.params.id);
  // A malformed id names no location: no read for it.
  if (!isId(id)) throw new ProblemError(problems.notFound('Location does not exist'));
  checkLocation(ctx, id);
  const location = await locations.find(id);
  if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
  return location;
}
