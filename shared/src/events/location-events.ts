/**
 * New-work notifications, published per location on Redis pub/sub so that an API node
 * subscribes only to the locations whose streams it holds.
 */
import type Redis from 'ioredis';
import type { CommandDoc, CommandRecord, OrderDoc, OrderRecord } from '../domain/records';
import { toCommandRecord, toOrderRecord } from '../domain/records';

export type LocationEvent =
  /** `failureCount` is for operators' streams (registers get the record alone); nodes older than it leave it out. */
  | { type: 'order'; record: OrderRecord; failureCount?: number }
  | { type: 'command'; record: CommandRecord }
  | { type: 'session-closed'; sessionId: string };

export const locationChannel = (prefix: string, locationId: string): string => `${prefix}:loc:${locationId}`;

export class EventPublisher {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  order(doc: OrderDoc): Promise<void> {
    return this.publish(doc.locationId, { type: 'order', record: toOrderRecord(doc), failureCount: doc.failureCount });
  }

  command(doc: CommandDoc): Promise<void> {
    return this.publish(doc.locationId, { type: 'command', record: toCommandRecord(doc) });
  }

  sessionClosed(locationId: string, sessionId: string): Promise<void> {
    return this.publish(locationId, { type: 'session-closed', sessionId });
  }

  private async publish(locationId: string, event: LocationEvent): Promise<void> {
    await this.redis.publish(locationChannel(this.prefix, locationId), JSON.stringify(event));
  }
}
