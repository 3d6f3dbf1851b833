/**
 * New-work notifications, published per location on Redis pub/sub so that an API node
 * subscribes only to the locations whose streams it holds.
 */
import type Redis from 'ioredis';
import type { CommandDoc, CommandRecord, OrderDoc, OrderRecord } from '../domain/records';
import { toCommandRecord, toOrderRecord } from '../domain/records';
import { SessionChange, sessionsChannel } from './session-changes';

export type LocationEvent = (
  | { type: 'order'; record: OrderRecord }
  | { type: 'command'; record: CommandRecord }
  | { type: 'session-closed'; sessionId: string }
) & {
  /**
   * When the event was published: epoch ms, to the microsecond (the publisher's clock). The API
   * nodes time their fan-out from it.
   */
  at?: number;
};

export const locationChannel = (prefix: string, locationId: string): string => `${prefix}:loc:${locationId}`;

/** Where events go: a Redis connection, or anything that publishes like one (the worker's outbox). */
export type Publish = Pick<Redis, 'publish'>;

export class EventPublisher {
  constructor(
    private readonly redis: Publish,
    private readonly prefix: string,
  ) {}

  order(doc: OrderDoc): Promise<void> {
    return this.publish(doc.locationId, { type: 'order', record: toOrderRecord(doc) });
  }

  command(doc: CommandDoc): Promise<void> {
    return this.publish(doc.locationId, { type: 'command', record: toCommandRecord(doc) });
  }

  sessionClosed(locationId: string, sessionId: string): Promise<void> {
    return this.publish(locationId, { type: 'session-closed', sessionId });
  }

  /** Tells every API node that the session changed (closed, key rotated): see session-changes. */
  async sessionChanged(sessionId: string): Promise<void> {
    const change: SessionChange = { sessionId };
    await this.redis.publish(sessionsChannel(this.prefix), JSON.stringify(change));
  }

  private async publish(locationId: string, event: LocationEvent): Promise<void> {
    event.at = performance.timeOrigin + performance.now();
    await this.redis.publish(locationChannel(this.prefix, locationId), JSON.stringify(event));
  }
}
