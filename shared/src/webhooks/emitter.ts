/**
 * The fan-out of events to webhook subscriptions: an event of the one publishing path
 * (EventPublisher) becomes its webhook types (event-types.ts), one delivery job per matching
 * subscription, its job id the delivery's `webhook-id` (see webhook-queue.ts).
 *
 * Subscriptions are cached per process; every change of one bumps a generation counter in Redis,
 * read once per event that maps to a webhook (one GET), and a changed generation reloads them.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis';
import type { DeliveryJobData } from '../queue/webhook-queue';
import type { DeliveryQueue } from './delivery-queue';
import type { WebhookTarget, WebhooksRepo } from '../store/webhooks';
import type { WebhookSink } from '../events/location-events';
import { WebhookSource, webhooksOf } from './event-types';

const generationKey = (prefix: string) => `${prefix}:webhooks:generation`;

/** Tells every process that subscriptions changed (after the write). */
export async function subscriptionsChanged(redis: RedisClient, prefix: string): Promise<void> {
  await redis.incr(generationKey(prefix));
}

/** `msg_` and 24 base64url characters of a hash: unique per event, type and subscription, the same whenever derived again. */
export function webhookIdOf(locationId: string, eventKey: string, subscriptionId: string): string {
  return `msg_${createHash('sha256').update(`${locationId}\n${eventKey}\n${subscriptionId}`).digest('base64url').slice(0, 24)}`;
}

/** The body every attempt of a delivery sends: `{type, timestamp, data}`, `data` with the location id first. */
export function deliveryBody(type: string, timestamp: Date, locationId: string | undefined, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: timestamp.toISOString(), data: locationId === undefined ? data : { locationId, ...data } });
}

/** An event as offered: where, what, and when it was published (epoch ms). */
export interface OfferedEvent {
  locationId: string;
  event: WebhookSource;
  at: number;
}

export class WebhookEmitter implements WebhookSink {
  private cache?: { generation: string | null; targets: WebhookTarget[] };

  constructor(
    private readonly deps: { redis: RedisClient; prefix: string; webhooks: Pick<WebhooksRepo, 'enabledTargets'>; deliveries: Pick<DeliveryQueue, 'add'> },
  ) {}

  /** The deliveries of some events, in order; an event that maps to no webhook costs nothing. */
  async deliveriesOf(events: OfferedEvent[]): Promise<DeliveryJobData[]> {
    const mapped = events.map((offered) => ({ offered, webhooks: webhooksOf(offered.event) })).filter((m) => m.webhooks.length > 0);
    if (mapped.length === 0) return [];
    const targets = await this.targets();
    const deliveries: DeliveryJobData[] = [];
    for (const { offered, webhooks } of mapped) {
      for (const target of targets) {
        if (target.locationIds && !target.locationIds.includes(offered.locationId)) continue;
        for (const webhook of webhooks) {
          if (!target.events.includes(webhook.type)) continue;
          deliveries.push({
            subscriptionId: target._id,
            webhookId: webhookIdOf(offered.locationId, webhook.eventKey, target._id),
            type: webhook.type,
            body: deliveryBody(webhook.type, new Date(offered.at), offered.locationId, webhook.data),
          });
        }
      }
    }
    return deliveries;
  }

  /** One event, offered straight (where no outbox holds them: the API, the deadline and presence jobs). */
  offer(locationId: string, event: WebhookSource, at: number): Promise<void> {
    return this.emit([{ locationId, event, at }]);
  }

  /** Fans the events out and adds their deliveries (two round trips, when any). */
  async emit(events: OfferedEvent[]): Promise<void> {
    await this.deps.deliveries.add(await this.deliveriesOf(events));
  }

  private async targets(): Promise<WebhookTarget[]> {
    const generation = await this.deps.redis.get(generationKey(this.deps.prefix));
    if (this.cache && this.cache.generation === generation) return this.cache.targets;
    // Read after the generation: a change landing in between reloads again next time, never the reverse.
    const targets = await this.deps.webhooks.enabledTargets();
    this.cache = { generation, targets };
    return targets;
  }
}
