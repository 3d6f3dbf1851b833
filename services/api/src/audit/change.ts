/**
 * What an operator write changed, for its audit record (`ctx.state.auditChange`): the fields of
 * the resources that grant or route something, cleaned of secrets. A token, key or webhook secret
 * is never among them, and a URL is shown by its scheme and host alone (a path or a query may
 * carry an endpoint's own token), with a fingerprint that tells one URL from another.
 */
import { createHash } from 'node:crypto';
import type { AuditChange } from '@pos/shared/schemas/responses';
import type { LocationDoc, OperatorDoc, WebhookDoc } from '@pos/shared/store/documents';
import type { AppContext } from '../context';

type AuditValue = string | number | boolean | string[];
export type AuditFields = Record<string, AuditValue>;

/** Locations as recorded: the list, or `allLocations: true` for a resource without one. */
const locationsOf = (locationIds: readonly string[] | undefined): AuditFields =>
  locationIds ? { locationIds: [...locationIds] } : { allLocations: true };

/**
 * A URL as the audit shows it: scheme and host, `/[REDACTED]` for whatever followed, and the first
 * 16 hex digits of its SHA-256 (`urlSha256`), so that a changed path is still a change.
 */
export function auditedUrl(url: string): AuditFields {
  const urlSha256 = createHash('sha256').update(url).digest('hex').slice(0, 16);
  try {
    const { origin, pathname, search } = new URL(url);
    return { url: pathname === '/' && search === '' ? origin : `${origin}/[REDACTED]`, urlSha256 };
  } catch {
    return { url: '[REDACTED]', urlSha256 };
  }
}

export const operatorFields = (doc: Pick<OperatorDoc, 'name' | 'role' | 'locationIds'>): AuditFields => ({
  name: doc.name,
  role: doc.role,
  ...locationsOf(doc.locationIds),
});

export const webhookFields = (doc: WebhookDoc): AuditFields => ({
  ...auditedUrl(doc.url),
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

/** An issued session, as the audit records it (never its key). */
export const sessionFields = (session: {
  type: string;
  deviceId?: string;
  userNumber?: number;
  tableNumber?: number;
  expiresAt?: string;
}): AuditFields => ({
  type: session.type,
  ...(session.deviceId !== undefined && { deviceId: session.deviceId }),
  ...(session.userNumber !== undefined && { userNumber: session.userNumber }),
  ...(session.tableNumber !== undefined && { tableNumber: session.tableNumber }),
  ...(session.expiresAt !== undefined && { expiresAt: session.expiresAt }),
});

/** The fields that differ, each side with its own (a field one side lacks is absent there). */
export function changed(before: AuditFields, after: AuditFields): AuditChange {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]),
  );
  const pick = (fields: AuditFields) =>
    Object.fromEntries(names.filter((name) => name in fields).map((name) => [name, fields[name]!]));
  return { before: pick(before), after: pick(after) };
}

/** Notes a write's change for its audit record. */
export function auditChange(ctx: AppContext, change: AuditChange): void {
  ctx.state.auditChange = change;
}

/** What a write made (`id`, a record's id or number) or did to it (`after`), for its audit record. */
export function auditDone(ctx: AppContext, id: string | number, after: AuditFields): void {
  auditChange(ctx, { id: String(id), after });
}
