/**
 * Which subscriptions an event is delivered to, and what each delivery sends. When the relay
 * records an event (events/outbox.ts, store/event-log.ts) it asks which deliveries the event owes:
 * one per enabled subscription whose locations and types take it, each with a `webhook-id` derived
 * from the event and the subscription, so that a delivery added again (a relay that ran twice, a
 * queue rebuilt after a Redis loss) is the same delivery. The body is made from the recorded event
 * alone: every attempt, and every delivery of it, sends the same `id`, `type`, `timestamp`, `data`.
 *
 * Subscriptions are cached per process; every change of one bumps a generation counter in Redis,
 * read once per relayed batch (one GET), and a changed generation reloads them.
 */
import { createHash } from 'node:crypto';
import type { OutboxEntry } from '../store/documents';
import type { EventDoc } from '../store/documents';
import type { OwedDelivery } from '../store/event-log';
import type { WebhookTarget, WebhooksRepo } from '../store/webhooks';
import type { DeliveryJobData } from '../queue/webhook-queue';
import type { RedisClient } from '../redis';

const generationKey = (prefix: string) => `${prefix}:webhooks:generation`;

/** Tells every process that subscriptions changed (after the write). */
export async function subscriptionsChanged(redis: RedisClient, prefix: string): Promise<void> {
  await redis.incr(generationKey(prefix));
}

/**
 * `msg_` and 24 base64url characters of a hash of the event and the subscription: the same whenever derived again.
 */
export function webhookIdOf(eventId: string, subscriptionId: string): string {
  return `msg_${createHash('sha256').update(`${eventId}\n${subscriptionId}`).digest('base64url').slice(0, 24)}`;
}

/** What a webhook body and a feed item say of an event. */
export interface EventBody {
  id: string;
  type: string;
  timestamp: string;
  /** The event's data, its `locationId` first. */
  data: Record<string, unknown>;
}

/** The event as its webhook body and its feed item show it. */
export function eventBody(event: Pick<EventDoc, 'eventId' | 'type' | 'timestamp' | 'locationId' | 'data'>): EventBody {
  return {
    id: event.eventId,
    type: event.type,
    timestamp: event.timestamp.toISOString(),
    data: { locationId: event.locationId, ...event.data },
  };
}

/** The body of an event that belongs to no location (`webhook.test`). */
export function unlocatedBody(id: string, type: string, timestamp: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ id, type, timestamp: timestamp.toISOString(), data });
}

/** The location of the event a body carries (`data.locationId`); undefined for an unlocated one (a test event). */
export function bodyLocation(body: string): string | undefined {
  try {
    const locationId = (JSON.parse(body) as { data?: { locationId?: unknown } }).data?.locationId;
    return typeof locationId === 'string' ? locationId : undefined;
  } catch {
    return undefined;
  }
}

/** The deliveries a recorded event still owes, as the delivery queue takes them. */
export function deliveriesOf(event: EventDoc): DeliveryJobData[] {
  const owed = Object.entries(event.undelivered ?? {});
  // (most events owe nothing: no body is made for them)
  if (owed.length === 0) return [];
  const body = JSON.stringify(eventBody(event));
  return owed.map(([webhookId, subscriptionId]) => ({
    subscriptionId,
    webhookId,
    type: event.type,
    body,
    eventId: event.eventId,
  }));
}

export class WebhookFanOut {
  private cache?: { generation: string | null; targets: WebhookTarget[] };

  constructor(
    private readonly deps: { redis: RedisClient; prefix: string; webhooks: Pick<WebhooksRepo, 'enabledTargets'> },
  ) {}

  /** For each event, the deliveries it owes: one per enabled subscription that takes its location and type. */
  async owedBy(events: OutboxEntry[]): Promise<Map<string, OwedDelivery[]>> {
    const owed = new Map<string, OwedDelivery[]>();
    if (events.length === 0) return owed;
    const targets = await this.targets();
    for (const event of events) {
      const takers = targets.filter(
        (target) =>
          target.events.includes(event.type) && (!target.locationIds || target.locationIds.includes(event.locationId)),
      );
      owed.set(
        event.id,
        takers.map((target) => ({ subscriptionId: target._id, webhookId: webhookIdOf(event.id, target._id) })),
      );
    }
    return owed;
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
