/**
 * The operators' views of the service's documents, as the admin API answers them: one function per
 * resource, each leaving out what is never shown (keys, tokens, their hashes, secrets). The
 * interface's own records (orders, commands) are records.ts's.
 */
import type {
  AuditRecord,
  LocationView,
  OperatorView,
  SessionView,
  WebhookDelivery,
  WebhookView,
} from '../schemas/responses';
import type {
  AuditDoc,
  LocationDoc,
  OperatorDoc,
  SessionDoc,
  WebhookDeliveryDoc,
  WebhookDoc,
} from '../store/documents';
import { isPaused } from './pause';

/** The operator's view of a location: its presence as last announced, and its pause as it is at `now`. */
export function toLocationView(doc: LocationDoc, now = new Date()): LocationView {
  const view: LocationView = {
    id: doc._id,
    name: doc.name,
    failureThreshold: doc.failureThreshold,
    online: doc.online === true,
    since: (doc.onlineSince ?? doc.createdAt).toISOString(),
    paused: isPaused(doc, now),
  };
  if (view.paused) {
    if (doc.pausedUntil) view.pausedUntil = doc.pausedUntil.toISOString();
    if (doc.pauseReason !== undefined) view.pauseReason = doc.pauseReason;
  }
  if (doc.orderDeadline !== undefined) view.orderDeadline = doc.orderDeadline;
  return view;
}

/** The admin's view of a session: never its key, never a key's hash. */
export function toSessionView(doc: SessionDoc): SessionView {
  const view: SessionView = {
    sessionId: doc._id,
    type: doc.type,
    locationId: doc.locationId,
    createdAt: doc.createdAt.toISOString(),
  };
  if (doc.deviceId !== undefined) view.deviceId = doc.deviceId;
  if (doc.userNumber !== undefined) view.userNumber = doc.userNumber;
  if (doc.tableNumber !== undefined) view.tableNumber = doc.tableNumber;
  if (doc.expiresAt) view.expiresAt = doc.expiresAt.toISOString();
  if (doc.closedAt) view.closedAt = doc.closedAt.toISOString();
  if (doc.keyRotatedAt) view.keyRotatedAt = doc.keyRotatedAt.toISOString();
  if (doc.previousKeyExpiresAt) view.previousKeyExpiresAt = doc.previousKeyExpiresAt.toISOString();
  return view;
}

/** The admin's view of an operator: never its token, never the token's hash. */
export function toOperatorView(doc: OperatorDoc): OperatorView {
  const view: OperatorView = { id: doc._id, name: doc.name, role: doc.role, createdAt: doc.createdAt.toISOString() };
  if (doc.locationIds) view.locationIds = doc.locationIds;
  if (doc.tokenRotatedAt) view.tokenRotatedAt = doc.tokenRotatedAt.toISOString();
  return view;
}

export function toWebhookView(doc: WebhookDoc): WebhookView {
  const view: WebhookView = {
    id: doc._id,
    url: doc.url,
    events: doc.events,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
  if (doc.locationIds) view.locationIds = doc.locationIds;
  if (doc.description !== undefined) view.description = doc.description;
  if (doc.previousSecretExpiresAt && doc.previousSecretExpiresAt > new Date())
    view.previousSecretExpiresAt = doc.previousSecretExpiresAt.toISOString();
  if (doc.failingSince) view.failingSince = doc.failingSince.toISOString();
  if (doc.disabledAt) view.disabledAt = doc.disabledAt.toISOString();
  if (doc.disabledReason) view.disabledReason = doc.disabledReason;
  return view;
}

export function toAuditRecord(doc: AuditDoc): AuditRecord {
  const record: AuditRecord = {
    id: doc._id,
    at: doc.at.toISOString(),
    operatorName: doc.operatorName,
    role: doc.role,
    method: doc.method,
    route: doc.route,
    targets: doc.targets,
    status: doc.status,
    requestId: doc.requestId,
  };
  if (doc.operatorId !== undefined) record.operatorId = doc.operatorId;
  if (doc.locationId !== undefined) record.locationId = doc.locationId;
  if (doc.claimedRequestId !== undefined) record.claimedRequestId = doc.claimedRequestId;
  if (doc.change !== undefined) record.change = doc.change;
  record.purgeAt = doc.purgeAt.toISOString();
  if (doc.seq !== undefined) record.seq = doc.seq;
  if (doc.prevHash !== undefined) record.prevHash = doc.prevHash;
  if (doc.hash !== undefined) record.hash = doc.hash;
  if (doc.fullHash !== undefined) record.fullHash = doc.fullHash;
  return record;
}

/**
 * An audit record as an operator bound to `within` reads it: the location ids a change names are
 * only its own, with `otherLocations` counting those it may not see (a bound token never learns
 * another location's id). Absent `within`: the record whole (chain-wide readers).
 */
export function auditRecordWithin(record: AuditRecord, within: readonly string[] | undefined): AuditRecord {
  if (within === undefined || record.change === undefined) return record;
  const scoped = (fields: Record<string, unknown> | undefined) => {
    const ids = fields?.locationIds;
    if (!Array.isArray(ids)) return fields;
    const mine = ids.filter((id: string) => within.includes(id));
    return {
      ...fields,
      locationIds: mine,
      ...(mine.length < ids.length && { otherLocations: ids.length - mine.length }),
    };
  };
  const { before, after } = record.change;
  return {
    ...record,
    change: {
      ...record.change,
      ...(before && { before: scoped(before) }),
      ...(after && { after: scoped(after) }),
    } as AuditRecord['change'],
  };
}

/** One attempt of a delivery, as the delivery log lists it. */
export function toDeliveryView(doc: WebhookDeliveryDoc): WebhookDelivery {
  const view: WebhookDelivery = {
    id: doc._id,
    webhookId: doc.webhookId,
    type: doc.type,
    attempt: doc.attempt,
    outcome: doc.outcome,
    durationMs: doc.durationMs,
    at: doc.at.toISOString(),
  };
  if (doc.statusCode !== undefined) view.statusCode = doc.statusCode;
  if (doc.error !== undefined) view.error = doc.error;
  if (doc.nextRetryAt) view.nextRetryAt = doc.nextRetryAt.toISOString();
  if (doc.redelivery) view.redelivery = true;
  return view;
}
