/**
 * Recording events in the event log: with the webhook deliveries each owes, which are then queued
 * (what each still owes, in the log's order: a subscription's oldest deliveries are the first
 * dropped past its cap). The relay does this with what it reads from the outboxes, and a
 * transition's writer with its order's events (own-events.ts).
 */
import type { OutboxEntry } from '@pos/shared/store/documents';
import type { EventLogRepo } from '@pos/shared/store/event-log';
import type { DeliveryQueue } from '@pos/shared/webhooks/delivery-queue';
import { deliveriesOf, type WebhookFanOut } from '@pos/shared/webhooks/fan-out';
import type { RelayMetrics } from '../metrics';

export interface RecordingDeps {
  events: Pick<EventLogRepo, 'record'>;
  fanOut: Pick<WebhookFanOut, 'owedBy'>;
  deliveries: Pick<DeliveryQueue, 'add'>;
  /** The lag is the relay's alone: a transition's writer records its events as it answers. */
  metrics: Pick<RelayMetrics, 'recorded'> & Partial<Pick<RelayMetrics, 'lagSeconds'>>;
}

/**
 * Records `entries`, in the order given (found recorded before: once), and queues what each owes.
 * The metrics count the events it added (one found recorded was counted by who recorded it).
 */
export async function recordEvents(deps: RecordingDeps, entries: OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const owed = await deps.fanOut.owedBy(entries);
  const { recorded, added } = await deps.events.record(
    entries.map((entry) => ({ ...entry, owed: owed.get(entry.id) ?? [] })),
    new Date(),
  );
  await deps.deliveries.add([...recorded.values()].sort((a, b) => a._id - b._id).flatMap(deliveriesOf));
  const at = Date.now();
  deps.metrics.recorded.inc(added.length);
  for (const event of added) deps.metrics.lagSeconds?.observe(Math.max(0, at - event.timestamp.getTime()) / 1000);
}
