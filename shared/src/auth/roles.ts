/**
 * Operator roles, least to most: each can do what the ones before it can (docs/operators.md).
 * The one order that route checks, the OpenAPI document and the board read.
 */
import type { OperatorRole } from '../store/documents';

export type Role = OperatorRole;

export const ROLES: readonly Role[] = ['viewer', 'manager', 'admin'];

/** Whether `role` may do what `needed` may. */
export function roleCovers(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** The roles that may call an operation that needs `needed` (the OpenAPI document's `x-roles`). */
export function rolesFrom(needed: Role): Role[] {
  return ROLES.filter((role) => roleCovers(role, needed));
}
