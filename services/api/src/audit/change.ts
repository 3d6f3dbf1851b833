/**
 * What an operator write changed, for its audit record (`ctx.state.auditChange`): the fields of
 * the resources that grant or route something, cleaned of secrets. A token, key or webhook secret
 * is never among them, and a URL's query values (which may carry an endpoint's own token) are
 * redacted.
 */
import type { AuditChange } from '@pos/shared/schemas/responses';
import type { LocationDoc, OperatorDoc, WebhookDoc } from '@pos/shared/store/documents';
import type { AppContext } from '../context';

type AuditValue = string | number | boolean | string[];
export type AuditFields = Record<string, AuditValue>;

/** Locations as recorded: the list, or `allLocations: true` for a resource without one. */
const locationsOf = (locationIds: readonly string[] | undefined): AuditFields => (locationIds ? { locationIds: [...locationIds] } : { allLocations: true });

/** A URL with its query values redacted (names kept); an unparsable one as it is. */
export function redactQuery(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.search === '') return url;
    const names = [...parsed.searchParams.keys()];
    return `${parsed.origin}${parsed.pathname}?${names.map((name) => `${encodeURIComponent(name)}=[REDACTED]`).join('&')}`;
  } catch {
    return url;
  }
}

export const operatorFields = (doc: Pick<OperatorDoc, 'name' | 'role' | 'locationIds'>): AuditFields => ({ name: doc.name, role: doc.role, ...locationsOf(doc.locationIds) });

export const webhookFields = (doc: WebhookDoc): AuditFields => ({
  url: redactQuery(doc.url),
  events: [...doc.events],
  ...locationsOf(doc.locationIds),
  ...(doc.description !== undefined && { description: doc.description }),
  enabled: doc.disabledAt === undefined,
});

export const locationFields = (doc: LocationDoc): AuditFields => ({
  name: doc.name,
  failureThreshold: doc.failureThreshold,
  ...(doc.orderDeadline !== undefined && { orderDeadline: doc.orderDeadline }),
});

/** The fields that differ, each side with its own (a field one side lacks is absent there). */
export function changed(before: AuditFields, after: AuditFields): AuditChange {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]));
  const pick = (fields: AuditFields) => Object.fromEntries(names.filter((name) => name in fields).map((name) => [name, fields[name]!]));
  return { before: pick(before), after: pick(after) };
}

/** Notes a write's change for its audit record. */
export function auditChange(ctx: AppContext, change: AuditChange): void {
  ctx.state.auditChange = change;
}
