/**
 * New-work notifications, published per location on Redis pub/sub so that an API node
 * subscribes only to the locations whose streams it holds (on a cluster, sharded pub/sub: the
 * channel lives on one shard, chosen by its hash slot, instead of being copied to every node).
 */
import type { CommandDoc, CommandRecord, OrderDoc, OrderRecord } from '../domain/records';
import { toCommandRecord, toOrderRecord } from '../domain/records';
import { publish, RedisClient } from '../redis';

export type LocationEvent =
  /**
   * `failureCount` is for operators' streams (registers get the record alone); `version` (the
   * order's write count) lets a stream drop a repeat or an overtaken state. Nodes older than
   * either leave it out.
   */
  | { type: 'order'; record: OrderRecord; failureCount?: number; version?: number }
  | { type: 'command'; record: CommandRecord }
  | { type: 'session-closed'; sessionId: string }
  | { type: 'key-rotated'; sessionId: string };

export const locationChannel = (prefix: string, locationId: string): string => `${prefix}:loc:${locationId}`;

export class EventPublisher {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  order(doc: OrderDoc): Promise<void> {
    return this.publish(doc.locationId, { type: 'order', record: toOrderRecord(doc), failureCount: doc.failureCount, version: doc.version });
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

  private async publish(locationId: string, event: LocationEvent): Promise<void> {
    await publish(this.redis, locationChannel(this.prefix, locationId), JSON.stringify(event));
  }
}
