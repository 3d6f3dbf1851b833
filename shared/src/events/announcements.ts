/**
 * New-work notifications, published per location on Redis pub/sub so that an API node
 * subscribes only to the locations whose streams it holds (on a cluster, sharded pub/sub: the
 * channel lives on one shard, chosen by its hash slot, instead of being copied to every node).
 */
import type { CommandRecord, OrderRecord } from '../domain/records';
import type { LocationView } from '../schemas/responses';
import type { CommandDoc, LocationDoc, OrderDoc } from '../store/documents';
import { toCommandRecord, toOrderRecord } from '../domain/records';
import { publish, RedisClient } from '../redis';
import { LocationSettingsChange, locationsChannel } from './location-changes';
import { OperatorChange, SessionChange, sessionsChannel } from './session-changes';
import { toLocationView } from '../domain/views';

export type Announcement =
  /**
   * `failureCount` is for operators' streams (registers get the record alone); `version` (the
   * order's write count) lets a stream drop a repeat or an overtaken state. Nodes older than
   * either leave it out.
   */
  (
    | {
        type: 'order';
        record: OrderRecord;
        failureCount?: number;
        version?: number;
        /** The order's placement is overdue (the operator's record carries it). */
        overdue?: true;
        /** For operators' streams alone: the announcement that the order went overdue (registers have its record). */
        operatorOnly?: true;
      }
    /** A location's presence or pause changed (operators' streams only; docs/presence-and-deadlines.md). */
    | { type: 'location'; location: LocationView; change: LocationChange }
    | { type: 'command'; record: CommandRecord }
    | { type: 'session-closed'; sessionId: string }
    | { type: 'key-rotated'; sessionId: string }
  ) & {
    /**
     * When the event was published: epoch ms, to the microsecond (the publisher's clock). The API
     * nodes time their fan-out from it.
     */
    at?: number;
  };

/** What a `location` event announces. */
export type LocationChange = 'online' | 'offline' | 'paused' | 'resumed';

/** A location's menu was accepted (docs/menu.md): its version, where it came from, what it holds. */
export interface MenuPublished {
  type: 'menu';
  version: number;
  source: 'register' | 'operator';
  counts: { items: number; modifierGroups: number; options: number };
}

/** A product of a location's menu was snoozed, or is available again (lifted, or its snooze ended); `at` keys it. */
export interface MenuAvailabilityChanged {
  type: 'menu-availability';
  productId: string;
  available: boolean;
  until?: string;
  reason?: string;
  at: number;
}

/**
 * What a change may be, for the event log and webhooks (events/outbox.ts): every location event,
 * and those only they hear of (an acknowledgement, the menu's).
 */
export type WebhookSource =
  Announcement | { type: 'command-acknowledged'; record: CommandRecord } | MenuPublished | MenuAvailabilityChanged;

export const locationChannel = (prefix: string, locationId: string): string => `${prefix}:loc:${locationId}`;

/**
 * Where events go: Redis (PUBLISH, or SPUBLISH on a cluster), or the job's
 * messages, which hold them for the job's reply.
 */
export interface Publisher {
  publish(channel: string, message: string): Promise<unknown>;
}

/** Publishes on Redis as the deployment does: PUBLISH on one Redis, SPUBLISH on a cluster, bounded. */
export const redisPublisher = (redis: RedisClient): Publisher => ({
  publish: (channel, message) => publish(redis, channel, message),
});

/** An order's event: its record, failure count and version (and its overdue mark). */
export function orderAnnouncementOf(doc: OrderDoc): Announcement & { type: 'order' } {
  const event: Announcement & { type: 'order' } = {
    type: 'order',
    record: toOrderRecord(doc),
    failureCount: doc.failureCount,
    version: doc.version,
  };
  if (doc.overdue === true) event.overdue = true;
  return event;
}

/**
 * Announces changes to the streams that show them (a location's channel, the session channel):
 * "announce" here, as "events" are the event log's (store/event-log.ts) and webhooks'.
 */
export class Announcer {
  constructor(
    private readonly redis: Publisher,
    private readonly prefix: string,
  ) {}

  /** An order's new state; `overdue` (operators' form only) once its placement is overdue. */
  order(doc: OrderDoc): Promise<void> {
    return this.publish(doc.locationId, orderAnnouncementOf(doc));
  }

  /**
   * The order's placement just went overdue: announced to operators alone, once (the caller's guarded write decides).
   */
  overdue(doc: OrderDoc): Promise<void> {
    return this.publish(doc.locationId, { ...orderAnnouncementOf(doc), overdue: true, operatorOnly: true });
  }

  /** A location went online or offline, paused or resumed: the operator's view of it, as it is now. */
  location(doc: LocationDoc, change: LocationChange): Promise<void> {
    return this.publish(doc._id, { type: 'location', location: toLocationView(doc), change });
  }

  command(doc: CommandDoc): Promise<void> {
    return this.publish(doc.locationId, { type: 'command', record: toCommandRecord(doc) });
  }

  sessionClosed(locationId: string, sessionId: string): Promise<void> {
    return this.publish(locationId, { type: 'session-closed', sessionId });
  }

  /** A session's key was rotated: streams opened with the old key end when its grace does. */
  keyRotated(locationId: string, sessionId: string): Promise<void> {
    return this.publish(locationId, { type: 'key-rotated', sessionId });
  }

  /** Tells every API node that the session changed (closed, key rotated): see session-changes. */
  async sessionChanged(sessionId: string): Promise<void> {
    const change: SessionChange = { sessionId };
    await this.redis.publish(sessionsChannel(this.prefix), JSON.stringify(change));
  }

  /** Tells every API node that an operator changed (deleted, token rotated, role or scope): see session-changes. */
  async operatorChanged(operatorId: string): Promise<void> {
    const change: OperatorChange = { operatorId };
    await this.redis.publish(sessionsChannel(this.prefix), JSON.stringify(change));
  }

  /** Tells every worker that the location's settings changed (its failure threshold): see location-changes. */
  async locationChanged(locationId: string): Promise<void> {
    const change: LocationSettingsChange = { locationId };
    await this.redis.publish(locationsChannel(this.prefix), JSON.stringify(change));
  }

  private async publish(locationId: string, event: Announcement): Promise<void> {
    event.at = performance.timeOrigin + performance.now();
    await this.redis.publish(locationChannel(this.prefix, locationId), JSON.stringify(event));
  }
}
