/**
 * The transactional outbox: the events a write implies, recorded in the changed document by that
 * same write (its `outbox`: store/outboxes.ts), so that a change is never written without its events.
 * The relay (the worker's outbox/relay.ts) moves them to the event log, where the feed reads them
 * and from which webhooks are delivered. Each event's id is derived from what it is (the webhook
 * mapping's key: the order's number and version, the command's number, the location's change and
 * its moment), so that relaying it twice records it once.
 *
 * These builders are the one place a write's events are made; event-types.ts says which.
 */
import { createHash } from 'node:crypto';
import { toCommandRecord } from '../domain/records';
import { toLocationView } from '../domain/views';
import type { CommandDoc, LocationDoc, OrderDoc, OutboxEntry } from '../store/documents';
import { webhooksOf, type WebhookSource } from '../webhooks/event-types';
import {
  type LocationChange,
  type MenuAvailabilityChanged,
  type MenuPublished,
  orderAnnouncementOf,
} from './announcements';

export type { OutboxEntry };

/** `evt_` and 24 base64url characters of a hash of where and what: the same whenever derived again. */
export function eventIdOf(locationId: string, eventKey: string): string {
  return `evt_${createHash('sha256').update(`${locationId}\n${eventKey}`).digest('base64url').slice(0, 24)}`;
}

/**
 * The events (none, one or two) a change is, as the webhook mapping makes them; `version` is the
 * document's version (or revision) as the write leaves it, which orders its events.
 */
export function outboxOf(locationId: string, source: WebhookSource, at: Date, version: number): OutboxEntry[] {
  return webhooksOf(source).map((webhook, i) => ({
    id: eventIdOf(locationId, webhook.eventKey),
    type: webhook.type,
    locationId,
    at,
    rank: [version, i],
    data: webhook.data,
  }));
}

/** An order's new state (placed, completed, aborted, failed), as written at `at`. */
export const orderOutbox = (after: OrderDoc, at: Date): OutboxEntry[] =>
  outboxOf(after.locationId, orderAnnouncementOf(after), at, after.version);

/** The order's placement went overdue. */
export const overdueOutbox = (after: OrderDoc, at: Date): OutboxEntry[] =>
  outboxOf(after.locationId, { ...orderAnnouncementOf(after), overdue: true, operatorOnly: true }, at, after.version);

/** A command has two writes: its creation, then its acknowledgement. */
export const commandCreatedOutbox = (command: CommandDoc): OutboxEntry[] =>
  outboxOf(command.locationId, { type: 'command', record: toCommandRecord(command) }, command.createdAt, 0);

export const commandAcknowledgedOutbox = (command: CommandDoc, at: Date): OutboxEntry[] =>
  outboxOf(command.locationId, { type: 'command-acknowledged', record: toCommandRecord(command) }, at, 1);

/** A location's presence or pause changed: the location as the change leaves it. */
export const locationOutbox = (after: LocationDoc, change: LocationChange, at: Date): OutboxEntry[] =>
  outboxOf(
    after._id,
    { type: 'location', location: toLocationView(after, at), change, at: at.getTime() },
    at,
    after.rev ?? 0,
  );

/** A location's menu was accepted, or a product's availability changed: recorded with the location's write. */
export const menuOutbox =
  (event: MenuPublished | MenuAvailabilityChanged, at: Date) =>
  (after: Pick<LocationDoc, '_id' | 'rev'>): OutboxEntry[] =>
    outboxOf(after._id, event, at, after.rev ?? 0);
