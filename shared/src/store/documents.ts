/**
 * The documents the service stores, one interface per collection (see `collections` in mongo.ts).
 * Types only: the repositories, the serialisers (domain/records.ts) and the views import them
 * from here, so that no module of the store needs another's code for its types.
 */
import type { CommandKind } from '../domain/commands';
import type { MenuCounts, Published, Snooze } from '../domain/menu-types';
import type { MenuDocument } from '../schemas/menu';
import type { OrderState } from '../domain/order-state';
import type { AuditChange, OrderRow } from '../schemas/responses';

/**
 * An event recorded by the write that implied it, in the changed document's `outbox`, until it
 * is in the event log and removed (events/outbox.ts). `data` is the webhook body's `data`.
 */
export interface OutboxEntry {
  /** The event's id (`evt_…`): derived from what the event is, so that recording it again finds it. */
  id: string;
  type: string;
  locationId: string;
  /** When the change was written: the event's `timestamp`. */
  at: Date;
  /**
   * Its place among its document's events: the document's version (or revision) its write left,
   * then its place among that write's events. Writes to one document are ordered by that version,
   * whatever the writers' clocks say.
   */
  rank: [number, number];
  data: Record<string, unknown>;
}

/** A document whose writes record their events (orders, commands, locations; store/outboxes.ts). */
export interface WithOutbox {
  /** Events written with the document, by id, until they are recorded in the event log and removed. */
  outbox?: Record<string, OutboxEntry>;
  /** How many of `outbox` wait for the relay: it finds the documents holding events by it. */
  outboxCount?: number;
  /**
   * Compat: set by a 0.5.0 worker's write that took the document's events over for its own relay;
   * this release writes none and relays such documents at once (store/outboxes.ts, HOLDING).
   */
  outboxDue?: Date;
}

export interface OrderDoc extends WithOutbox {
  _id: string;
  locationId: string;
  number: number;
  state: OrderState;
  /** Grows by one with every write; writes are conditional on the version read. */
  version: number;
  failureCount: number;
  /**
   * Ids of the last jobs applied, each with a mark of its attempt, so a job re-run after a crash
   * (or retried under its Idempotency-Key) is applied once; older ones are in the applied-jobs
   * ledger (store/applied-jobs.ts).
   */
  appliedJobs: string[];
  /** Set once the order moved applied job ids to the ledger: a job not among `appliedJobs` may be there. */
  appliedJobsMoved?: true;
  rows: OrderRow[];
  guestCount: number;
  tableNumber?: number;
  userNumber?: number;
  /** The customer session that created the order; absent for counter orders. */
  sessionId?: string;
  /** The creating request's identity under an Idempotency-Key, so that its retry finds this order. */
  idempotencyId?: string;
  orderTime?: Date;
  completeTime?: Date;
  failedTime?: Date;
  /** Set when this placement (its `orderTime`) went past the order deadline; operators only. */
  overdue?: boolean;
  /** The order deadline job whose write marked it overdue: that job run again finishes what it began. */
  overdueJob?: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A migration this deployment has run (migrations/runner.ts). */
export interface MigrationDoc {
  /** The migration's id. */
  _id: string;
  appliedAt: Date;
  /** The release that ran it. */
  release: string;
}

/** Applied job ids an order moved out of its own document (store/applied-jobs.ts). */
export interface AppliedJobsDoc {
  /** The order's id and the version it moved them at. */
  _id: string;
  orderId: string;
  /** Job ids, without their attempt marks. */
  jobs: string[];
  expireAt: Date;
}

export interface CommandDoc extends WithOutbox {
  _id: string;
  locationId: string;
  number: number;
  kind: CommandKind;
  tableNumber?: number;
  /** The customer session that asked for it (its commands are capped); never on the wire. */
  sessionId?: string;
  /** The creating request's identity under an Idempotency-Key, so that its retry finds this command. */
  idempotencyId?: string;
  createdAt: Date;
  /** A command is live until acknowledged or until this moment. */
  expiresAt: Date;
  /** When a register (or an operator on its behalf) acknowledged it: it is no longer live. */
  acknowledgedAt?: Date;
  /** When the command is removed (a day after `expiresAt`: its events are relayed long before). */
  purgeAt?: Date;
}

export interface LocationDoc extends WithOutbox {
  _id: string;
  name: string;
  failureThreshold: number;
  /** The last order and command numbers handed out; the two per-location sequences. */
  orderSeq: number;
  commandSeq: number;
  createdAt: Date;
  /** The announced presence (the worker's sweep writes it; absent: never seen) and since when. */
  online?: boolean;
  onlineSince?: Date;
  /** Set while paused; `pausedUntil` absent: until an operator resumes it. */
  pausedAt?: Date;
  pausedUntil?: Date;
  pauseReason?: string;
  /** The location's own order deadline (a duration; `0`: none), over ORDER_DEADLINE. */
  orderDeadline?: string;
  /** When its last pause ended (keys the `location.resumed` event). */
  resumedAt?: Date;
  /**
   * Grows by one with every write that changes what the location's view shows (name, threshold,
   * deadline, presence, pause) or its menu (the menu, a snooze); those writes are conditional on
   * the revision read, so that the event they record shows the location as they left it. Absent
   * on a location never so written.
   */
  rev?: number;
  /** Its orders that reached FAILED in a row (PAUSE_AFTER_FAILED_ORDERS); a COMPLETED one resets it. */
  failedInRow?: number;
  /** The menu it serves (docs/menu.md): absent until one is accepted. */
  menu?: MenuPointer;
  /**
   * Its products snoozed (86ed); kept when the menu is replaced. One
   * whose `until` has come has ended, written or not.
   */
  snoozes?: Snooze[];
  /**
   * Changes the worker's sweep wrote and has not announced yet, cleared once it has: a sweep that
   * dies between its write and its announcement leaves them for the next sweep.
   */
  unannounced?: SweptChange[];
}

/** A location's menu: the stored document (`menus`, by its hash) and its version there. */
export interface MenuPointer extends Published {
  /** The `_id` of its document in `menus`. */
  id: string;
  counts: MenuCounts;
  /** The upload's own mark: of two at once, it tells which one a location took. */
  mark: string;
}

/** A menu document, stored once however many locations serve it. */
export interface MenuDoc {
  /** Its hash (domain/menu.ts menuIdOf). */
  _id: string;
  menu: MenuDocument;
  createdAt: Date;
}

/** The location changes the presence sweep writes. */
export type SweptChange = 'online' | 'offline' | 'resumed';

export type SessionType = 'SERVICE' | 'CUSTOMER';

export interface SessionDoc {
  _id: string;
  type: SessionType;
  locationId: string;
  /** SHA-256 of the API key; the key itself is never stored. */
  keyHash: string;
  /**
   * The hash of the key the last rotation replaced; it keeps working until previousKeyExpiresAt (auth/session-rules).
   */
  previousKeyHash?: string;
  previousKeyExpiresAt?: Date;
  keyRotatedAt?: Date;
  deviceId?: string;
  userNumber?: number;
  tableNumber?: number;
  createdAt: Date;
  expiresAt?: Date;
  closedAt?: Date;
}

export type NewSession = Omit<
  SessionDoc,
  '_id' | 'createdAt' | 'closedAt' | 'previousKeyHash' | 'previousKeyExpiresAt' | 'keyRotatedAt'
>;

export interface ArchivedOrderDoc extends OrderDoc {
  archivedAt: Date;
  /** The archive drops the order at this moment (ORDER_RETENTION after archiving). */
  purgeAt: Date;
  /**
   * Set on an unsubmitted order (SELECTING or NEW) that expired: kept for the record, answered as a missing order.
   */
  expiredAt?: Date;
}

export interface WebhookDoc {
  _id: string;
  url: string;
  events: string[];
  /** Absent: every location. */
  locationIds?: string[];
  description?: string;
  /** The signing secret, sealed under the server key (webhooks/secrets.ts); never on the wire after creation. */
  secret: string;
  /** The secret the last rotation replaced; it signs too until previousSecretExpiresAt. */
  previousSecret?: string;
  previousSecretExpiresAt?: Date;
  createdAt: Date;
  updatedAt: Date;
  /** The first failed attempt since the last success; cleared by a success. */
  failingSince?: Date;
  disabledAt?: Date;
  disabledReason?: string;
}

/** `dropped`: never attempted again, the subscription having more than WEBHOOK_MAX_PENDING waiting. */
export type WebhookOutcome = 'delivered' | 'retrying' | 'failed' | 'disabled' | 'dropped';

/** One attempt of one delivery, kept for WEBHOOK_LOG_RETENTION. */
export interface WebhookDeliveryDoc {
  /** UUIDv7: newest first is descending `_id`. */
  _id: string;
  subscriptionId: string;
  webhookId: string;
  type: string;
  /**
   * The location of the event delivered: who may read and resend the attempt (its subscription's
   * locations may change since). Absent for a test event, and on attempts recorded before 0.5.0
   * until the migration fills it in.
   */
  locationId?: string;
  /** The body sent, so that it can be sent again (redelivery). */
  body: string;
  attempt: number;
  outcome: WebhookOutcome;
  statusCode?: number;
  error?: string;
  durationMs: number;
  at: Date;
  nextRetryAt?: Date;
  redelivery?: true;
  purgeAt: Date;
}

/** What an operator may do (auth/roles.ts): each role can do what the one before it can. */
export type OperatorRole = 'viewer' | 'manager' | 'admin';

export interface OperatorDoc {
  _id: string;
  name: string;
  role: OperatorRole;
  /** The locations it covers; absent: all of them. */
  locationIds?: string[];
  /** SHA-256 of the token; the token itself is never stored. */
  tokenHash: string;
  createdAt: Date;
  tokenRotatedAt?: Date;
}

/** One operator write (an admin API call that changes something, a Bull Board action). */
export interface AuditDoc {
  _id: string;
  at: Date;
  /** Absent for the root credential (ADMIN_TOKEN), named `root`. */
  operatorId?: string;
  operatorName: string;
  role: OperatorRole;
  method: string;
  /** The route's pattern (`/admin/v1/locations/:id/orders`), not the path: ids are in `targets`. */
  route: string;
  /** The ids the route's parameters name (location, order number, session, operator, webhook). */
  targets: Record<string, string>;
  /** The location it concerns, for the scoped reads of the log. */
  locationId?: string;
  status: number;
  /** The service's id of the request (its log lines carry it). */
  requestId: string;
  /** The caller's X-Request-Id, when it sent one: a claim, not the service's id. */
  claimedRequestId?: string;
  /** What the write changed, cleaned of secrets. */
  change?: AuditChange;
  /**
   * The record's place in the hash chain, the hash of the one before it, and its own
   * (store/audit.ts); absent on records written before the chain.
   */
  seq?: number;
  prevHash?: string;
  hash?: string;
  /**
   * SHA-256 of `hash` and what `hash` leaves out (`purgeAt`, `claimedRequestId`), so that every
   * stored field is under a hash; on records written since 0.5.0 (store/audit.ts).
   */
  fullHash?: string;
  /** The record is removed at this moment (AUDIT_RETENTION after the write), oldest first. */
  purgeAt: Date;
}

/**
 * The audit chain's two anchors (store/audit.ts): `audit`, where it now starts (the last record
 * the retention removed); `head`, the newest record written, so that a removed tail is found.
 */
export interface AuditAnchorDoc {
  _id: 'audit' | 'head';
  seq: number;
  hash: string;
}

/** The event log (store/event-log.ts): one recorded event. */
export interface EventDoc {
  /** `seq`: the event's place in the feed. */
  _id: number;
  eventId: string;
  type: string;
  locationId: string;
  timestamp: Date;
  data: Record<string, unknown>;
  recordedAt: Date;
  /** Deliveries not yet settled (delivered, failed for good, dropped, or their subscription gone), by webhook-id. */
  undelivered?: Record<string, string>;
  /** How many there are: the index of the events that still owe deliveries. */
  pendingDeliveries?: number;
}

/** Who runs a job that one worker at a time runs (store/leases.ts). */
export interface LeaseDoc {
  _id: string;
  holder: string;
  /** The writer's clock plus the lease: for 0.5.0's processes only (leases.ts). */
  until: Date;
  /** New at every renewal, since 0.6.0: what a contender watches. */
  token?: string;
}
