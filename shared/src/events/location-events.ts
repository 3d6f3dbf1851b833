/**
 * New-work notifications, published per location on Redis pub/sub so that an API node
 * subscribes only to the locations whose streams it holds (on a cluster, sharded pub/sub: the
 * channel lives on one shard, chosen by its hash slot, instead of being copied to every node).
 */
import type { CommandRecord, OrderRecord } from '../domain/records';
import type { CommandDoc, OrderDoc } from '../store/documents';
import { toCommandRecord, toOrderRecord } from '../domain/records';
import { publish, RedisClient } from '../redis';
import { OperatorChange, SessionChange, sessionsChannel } from './session-changes';

export type LocationEvent = (
  /**
   * `failureCount` is for operators' streams (registers get the record alone); `version` (the
   * order's write count) lets a stream drop a repeat or an overtaken state. Nodes older than
   * either leave it out.
   */
  | { type: 'order'; record: OrderRecord; failureCount?: number; version?: number }
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

export const locationChannel = (prefix: string, locationId: string): string => `${prefix}:loc:${locationId}`;

/** Where events go: Redis (PUBLISH, or SPUBLISH on a cluster), or the worker's outbox, which holds them for the job's reply. */
export interface Publisher {
  publish(channel: string, message: string): Promise<unknown>;
}

/** Publishes on Redis as the deployment does: PUBLISH on one Redis, SPUBLISH on a cluster, bounded. */
export const redisPublisher = (redis: RedisClient): Publisher => ({ publish: (channel, message) => publish(redis, channel, message) });

export class EventPublisher {
  constructor(
    private readonly redis: Publisher,
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

  private async publish(locationId: string, event: LocationEvent): Promise<void> {
    event.at = performance.timeOrigin + performance.now();
    await this.redis.publish(locationChannel(this.prefix, locationId), JSON.stringify(event));
  }
}
