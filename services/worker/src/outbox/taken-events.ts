/**
 * The events of the order transitions this worker writes while it relays (holds the relay's
 * lease). Such a write takes its order's events over from the outbox (store/outboxes.ts,
 * withTakenOutbox) and hands them here; the relay's next pass records them with what it reads from
 * the outboxes, and the order's next write removes them: one write of the order per change, where
 * leaving them to the relay costs a second write to clear them. A worker that does not relay
 * leaves its events to the relay, as every other write does.
 *
 * Nothing here needs to survive the process: the events are in their orders. Should this worker
 * die or lose the lease before its pass, the relay that takes the lease over reads every order's
 * taken events at once.
 */
import { LRUCache } from 'lru-cache';
import type { OrderDoc, OutboxEntry } from '@pos/shared/store/documents';
import { type HeldEvents, inRankOrder, type TakeOver } from '@pos/shared/store/outboxes';

/** Event ids remembered as recorded: those of the orders changed in the last minutes, and then some. */
const REMEMBERED = 20_000;

export class TakenEvents {
  private readonly recorded = new LRUCache<string, true>({ max: REMEMBERED });
  /** The events handed over and not recorded yet, by order. */
  private readonly waiting = new Map<string, HeldEvents>();

  /** `relaying`: whether this worker holds the relay's lease, with time to spare. */
  constructor(private readonly relaying: () => boolean) {}

  /** How a transition's write of `order` treats its events: taken over while this worker relays, else left to the relay. */
  takeOver(order: OrderDoc): TakeOver | undefined {
    if (!this.relaying()) return undefined;
    return { recorded: Object.keys(order.outbox ?? {}).filter((id) => this.recorded.has(id)) };
  }

  /** Hands the relay's next pass the events `order` holds (as a write that took them over left it, or as read on a job's re-run). */
  take(order: OrderDoc): void {
    if (!this.relaying()) return;
    const outbox = inRankOrder(order.outbox).filter((entry) => !this.recorded.has(entry.id));
    if (outbox.length > 0) this.waiting.set(order._id, { _id: order._id, outbox, count: 0 });
  }

  /** Whether a pass of this worker's relay recorded the event (lately: see REMEMBERED). */
  isRecorded(id: string): boolean {
    return this.recorded.has(id);
  }

  /** How many orders' events wait for the relay's pass. */
  get size(): number {
    return this.waiting.size;
  }

  /** What waits for the relay's pass, each order's events in the order of its writes. */
  waitingNow(): HeldEvents[] {
    return [...this.waiting.values()];
  }

  /** A pass recorded `entries`, among them those of `taken` (what it had from waitingNow). */
  recordedNow(entries: OutboxEntry[], taken: HeldEvents[]): void {
    for (const entry of entries) this.recorded.set(entry.id, true);
    // (an order written again meanwhile was handed over again, with its newer events)
    for (const doc of taken) if (this.waiting.get(doc._id) === doc) this.waiting.delete(doc._id);
  }

  /** The lease is lost: what waits is left in its orders, for the relay that holds it now. */
  forget(): void {
    this.waiting.clear();
  }
}
