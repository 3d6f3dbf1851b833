/**
 * The values repositories put into MongoDB filters, checked at the last step: a string where a
 * string belongs, never an object that MongoDB would read as an operator (`{"$ne": null}` as a
 * session id matches every session). Callers validate their input at the boundary (request
 * schemas, path parameters, job schemas); a failure here is a bug, thrown as a TypeError.
 */

/** Ids of locations and sessions (UUIDs) and key hashes (hex): what path parameters and jobs may name. */
export const ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
const ID = new RegExp(ID_PATTERN);

/** True for a well-formed id; anything else names no record, so callers answer "not found". */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && ID.test(value);
}

export function asString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`${what} must be a string in a query, not ${typeof value}`);
  return value;
}

export function asInteger(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw new TypeError(`${what} must be an integer in a query`);
  return value;
}

/**
 * The filter on a `locationIds` field for records bound to locations that all lie within
 * `within` (an operator account, a webhook subscription, as a bound operator may see them);
 * a record without the field spans every location and does not match.
 */
export function withinLocations(within: readonly string[]) {
  return { $exists: true, $not: { $elemMatch: { $nin: within.map((id) => asString(id, 'locationId')) } } };
}
