/**
 * An operator's scope: the locations it covers (absent: every location, "unbound"). The one
 * policy of what a bound operator may reach and grant (docs/operators.md); the API's access
 * mechanism applies it, the stream hub re-checks it, the OpenAPI document describes it.
 */
import { Role, roleCovers } from './roles';

export interface Scoped {
  role: Role;
  /** The locations it covers; absent: all of them. */
  locationIds?: readonly string[];
}

/**
 * What an operator bound to locations may do with an operation (`bound` in the operation table):
 * `chain`: nothing, it is chain-wide (an unbound admin's); `locations`: what lies within its
 * locations (another location's resources answer as missing ones; lists show only its own).
 */
export type BoundAccess = 'chain' | 'locations';

export const isBound = (operator: Pick<Scoped, 'locationIds'>): boolean => operator.locationIds !== undefined;

/** Whether the operator covers the location. */
export function coversLocation(operator: Pick<Scoped, 'locationIds'>, locationId: string): boolean {
  return operator.locationIds === undefined || operator.locationIds.includes(locationId);
}

/**
 * Whether the operator covers every location of a resource bound to `locationIds` (an operator
 * account, a webhook subscription); a resource without them spans every location, which only an
 * unbound operator covers.
 */
export function coversAll(operator: Pick<Scoped, 'locationIds'>, locationIds: readonly string[] | undefined): boolean {
  if (operator.locationIds === undefined) return true;
  if (locationIds === undefined) return false;
  return locationIds.every((id) => operator.locationIds!.includes(id));
}

/** What a write grants: a role, locations (`'all'`: every location); absent: left as it is. */
export interface Grant {
  role?: Role;
  locations?: readonly string[] | 'all';
}

/**
 * Why the operator may not grant `grant`, or undefined when it may: never a role above its own,
 * never a location outside its own (an operator bound to locations never grants them all).
 */
export function grantRefusal(operator: Scoped, grant: Grant): string | undefined {
  if (grant.role !== undefined && !roleCovers(operator.role, grant.role))
    return `An operator may grant no role above its own (${operator.role})`;
  if (grant.locations === undefined || coversAll(operator, grant.locations === 'all' ? undefined : grant.locations))
    return undefined;
  return grant.locations === 'all'
    ? 'Only an operator not bound to locations may grant every location: name the locations ' +
        'instead (locationIds; in the CLI, --locations ID,ID), within your own'
    : 'An operator bound to locations may grant only locations within its own';
}

/** The 403's detail for a bound operator on a chain-wide operation. */
export const CHAIN_WIDE_DETAIL = 'This is chain-wide: it needs an operator not bound to locations';
