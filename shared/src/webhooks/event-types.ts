/**
 * Which webhooks an event of the one publishing path (Announcer) becomes: one table, a row
 * per webhook type, each naming the event it comes from, when it applies, and what its `data`
 * holds. Location and overdue events (presence, deadlines) become webhooks by adding rows here.
 */
import type { OperatorOrderRecord } from '../domain/records';
import type { LocationChange, WebhookSource } from '../events/announcements';

export type { WebhookSource };

/**
 * A webhook's `data`, beside `locationId`: the operator's form of the order
 * (with `version`), the command, or the location.
 */
export type WebhookData = Record<string, unknown>;

/**
 * What an event that is this kind of change carries: its data, and its key, what makes the event
 * unique and the same when published again (a re-run job announces the order again): the record
 * and, for an order, its version.
 */
type Match = { key: string; data: WebhookData } | undefined;

interface WebhookRow {
  type: string;
  match(event: WebhookSource): Match;
}

type OrderEvent = Extract<WebhookSource, { type: 'order' }>;

/** An order event that `when` accepts: the order as operators see it, with the version that orders its events. */
const order =
  (when: (event: OrderEvent) => boolean) =>
  (event: WebhookSource): Match => {
    if (event.type !== 'order' || !when(event)) return undefined;
    const record: OperatorOrderRecord & { version?: number } = {
      ...event.record,
      failureCount: event.failureCount ?? 0,
    };
    if (event.version !== undefined) record.version = event.version;
    return { key: `order.${event.record.number}.${event.version ?? 0}`, data: { order: record } };
  };
/** A state change of the order (not the announcement that its placement went overdue, which has its own row). */
const inState = (state: string) => (event: OrderEvent) => event.record.state === state && event.operatorOnly !== true;
/** A failure report leaves the order PLACED (below the threshold) or FAILED, its count up; a recovery zeroes it. */
const afterFailureReport = (event: OrderEvent): boolean =>
  event.operatorOnly !== true &&
  (event.failureCount ?? 0) > 0 &&
  (event.record.state === 'PLACED' || event.record.state === 'FAILED');

/** The announcement that a placement went overdue: once per placement (its `orderTime`). */
const overdue = (e: WebhookSource): Match => {
  if (e.type !== 'order' || e.operatorOnly !== true || e.overdue !== true) return undefined;
  const record: OperatorOrderRecord & { version?: number; overdue: true } = {
    ...e.record,
    failureCount: e.failureCount ?? 0,
    overdue: true,
  };
  if (e.version !== undefined) record.version = e.version;
  return { key: `order.${e.record.number}.overdue.${e.record.orderTime}`, data: { order: record } };
};

/**
 * A location's presence or pause change. Each is announced once, by the guarded write that made
 * it: an online/offline change is keyed by when it began, a pause or resume by when it was announced.
 */
const location =
  (change: LocationChange) =>
  (e: WebhookSource): Match => {
    if (e.type !== 'location' || e.change !== change) return undefined;
    const when = change === 'online' || change === 'offline' ? e.location.since : String(e.at ?? 0);
    return { key: `location.${e.location.id}.${change}.${when}`, data: { location: e.location } };
  };

/** A location's menu events: each accepted version once, each availability change once (by its moment). */
const menuPublished = (e: WebhookSource): Match => {
  if (e.type !== 'menu') return undefined;
  return { key: `menu.${e.version}`, data: { version: e.version, source: e.source, counts: e.counts } };
};
const availabilityChanged = (e: WebhookSource): Match => {
  if (e.type !== 'menu-availability') return undefined;
  const data: WebhookData = { productId: e.productId, available: e.available };
  if (e.until !== undefined) data.until = e.until;
  if (e.reason !== undefined) data.reason = e.reason;
  return { key: `menu.availability.${e.productId}.${e.at}`, data };
};

export const WEBHOOK_ROWS: WebhookRow[] = [
  // placed on creation or submission, and again when a failure report or a recovery puts it back
  { type: 'order.placed', match: order(inState('PLACED')) },
  { type: 'order.completed', match: order(inState('COMPLETED')) },
  { type: 'order.aborted', match: order(inState('ABORTED')) },
  { type: 'order.failed', match: order(afterFailureReport) },
  {
    type: 'command.created',
    match: (e) =>
      e.type === 'command' ? { key: `command.${e.record.number}`, data: { command: e.record } } : undefined,
  },
  {
    type: 'command.acknowledged',
    match: (e) =>
      e.type === 'command-acknowledged'
        ? { key: `command.${e.record.number}.ack`, data: { command: e.record } }
        : undefined,
  },
  { type: 'order.overdue', match: overdue },
  { type: 'location.online', match: location('online') },
  { type: 'location.offline', match: location('offline') },
  { type: 'location.paused', match: location('paused') },
  { type: 'location.resumed', match: location('resumed') },
  { type: 'menu.published', match: menuPublished },
  { type: 'menu.item_availability_changed', match: availabilityChanged },
];

/** An event's id (events/outbox.ts): `evt_` and 24 base64url characters. */
export const EVENT_ID_PATTERN = '^evt_[A-Za-z0-9_-]{24}$';

/** Sent by POST /admin/v1/webhooks/{id}/test; never from an event. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The types a subscription may ask for. */
export const WEBHOOK_EVENT_TYPES: string[] = WEBHOOK_ROWS.map((row) => row.type);

export interface MappedWebhook {
  type: string;
  /** Unique per event and type, the same whenever the event is published again. */
  eventKey: string;
  data: WebhookData;
}

/** The webhooks an event becomes (none for most: carts, session changes). */
export function webhooksOf(event: WebhookSource): MappedWebhook[] {
  const mapped: MappedWebhook[] = [];
  for (const row of WEBHOOK_ROWS) {
    const match = row.match(event);
    if (match) mapped.push({ type: row.type, eventKey: `${match.key}.${row.type}`, data: match.data });
  }
  return mapped;
}
