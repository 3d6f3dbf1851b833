/**
 * The event relay: moves the events that writes left in the outboxes (events/outbox.ts) to the
 * event log, and adds the webhook deliveries each owes. Every worker runs one; one at a time
 * works (a lease in MongoDB), the others wait to take over. The order transitions its own worker
 * writes meanwhile take their events over and hand them to it (taken-events.ts), so that their
 * orders are not written a second time to clear them. It is safe wherever it is killed:
 *
 * - an event is cleared from its document's outbox only after it is recorded and its deliveries
 *   are queued; a relay that dies before then leaves it there, and the next pass records it again
 *   (found recorded: once) and queues what it still owes (the same webhook-ids: once);
 * - an event handed over stays in its order until the order's next write, which happens only
 *   after it is recorded, or until the relay reads it once due; a relay that takes the lease
 *   reads every taken event at once, whatever it is due (its taker may have died before its pass);
 * - a delivery is owed by its event until it settles (delivery.ts), so a delivery queue that Redis
 *   lost (a flush, a restart without persistence, a failover) is rebuilt from the event log: at
 *   once when the relay sees Redis lost its data (its marker key gone), and every minute for the
 *   recent events (what a failover may have lost).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { Logger } from '@pos/shared/log';
import type { RedisClient } from '@pos/shared/redis';
import type { EventLogRepo } from '@pos/shared/store/event-log';
import type { LeasesRepo } from '@pos/shared/store/leases';
import type { EventDoc, OutboxEntry } from '@pos/shared/store/documents';
import { type HeldEvents, type OutboxesReader, TAKEN_OUTBOX_DUE_MS } from '@pos/shared/store/outboxes';
import type { DeliveryJobData } from '@pos/shared/queue/webhook-queue';
import type { DeliveryQueue } from '@pos/shared/webhooks/delivery-queue';
import { deliveriesOf, type WebhookFanOut } from '@pos/shared/webhooks/fan-out';
import { DoublingPause } from '@pos/shared/util/doubling-pause';
import type { RelayMetrics } from '../metrics';
import { TakenEvents } from './taken-events';

/** Documents read from each outbox per pass (all outboxes in one command). */
const BATCH = 256;
/**
 * The pause after a pass that found nothing to do: from the first, doubling while there is
 * nothing, up to the last.
 */
const IDLE_PASS_MS = [50, 1_000] as const;
/**
 * The pause after a pass that relayed less than a batch: the events of that time go in the next
 * pass together. A pass costs a few commands whatever it carries (the outboxes' read, the insert,
 * the clears), so under a steady flow this bounds the relay's commands per
 * second instead of paying them for every few events; it is what an event may wait beyond its
 * write. A full batch goes on at once.
 */
const GATHER_MS = 200;
/**
 * While this worker's own writes hand their events over (TakenEvents), a pass needs no read of the
 * outboxes to relay them: the outboxes are then read again only after this pause from a read that
 * found nothing, doubling while they stay empty (each pass while they hold events). Passes with
 * nothing handed over read them every time, at the loop's own pace.
 */
const EMPTY_OUTBOX_MS = IDLE_PASS_MS;
const LEASE = 'event-relay';
const LEASE_MS = 10_000;
/** How often the relay looks for a Redis that lost its data. */
const REDIS_CHECK_MS = 5_000;
/** How often the deliveries of recent events are added again (no-ops for those still queued), and how far back. */
const RECENT_CHECK_MS = 60_000;
const RECENT_MS = 10 * 60_000;
/** Events read per page when deliveries are restored. */
const RESTORE_PAGE = 500;

export interface RelayDeps {
  outboxes: OutboxesReader;
  events: Pick<EventLogRepo, 'record' | 'owing'>;
  leases: Pick<LeasesRepo, 'hold' | 'release'>;
  fanOut: Pick<WebhookFanOut, 'owedBy'>;
  deliveries: Pick<DeliveryQueue, 'addBatches'>;
  redis: RedisClient;
  prefix: string;
  metrics: RelayMetrics;
  log: Logger;
}

/**
 * The events of several documents in the order they were written: each document's in its own
 * order (the order of its writes), merged by when they were written (the writers' clocks, which
 * only decide between documents). An event waits for those before it in its document, so it is
 * placed at the latest time its document's events have reached by then; ties go to the earlier
 * document. (The same as taking, again and again, the earliest of the documents' next events,
 * in one sort rather than a scan of every document per event.)
 */
export function inWriteOrder(docs: HeldEvents[]): OutboxEntry[] {
  const placed = docs.flatMap((doc, d) => {
    let reached = -Infinity;
    return doc.outbox.map((entry, i) => ({ entry, reached: (reached = Math.max(reached, entry.at.getTime())), d, i }));
  });
  return placed.sort((a, b) => a.reached - b.reached || a.d - b.d || a.i - b.i).map(({ entry }) => entry);
}

export class OutboxRelay {
  private readonly holder = randomUUID();
  private leaseUntil = 0;
  private nextRedisCheck = 0;
  private nextRecentCheck = Date.now() + RECENT_CHECK_MS;
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  /**
   * Set when this worker takes the lease: until a pass finds less than a batch in every outbox,
   * passes read the events taken over by any worker's writes, due or not, and follow at once.
   */
  private catchingUp = false;
  /** When the outboxes are read next while events are handed over (see EMPTY_OUTBOX_MS), and the pause after one more empty read. */
  private nextOutboxRead = 0;
  private readonly emptyOutbox = new DoublingPause(EMPTY_OUTBOX_MS);
  /**
   * The events of the order transitions this worker writes while it relays. Its writes take them
   * over only with a quarter of the lease to spare, so that they are recorded by this worker's
   * pass or, should it lose the lease, by the catching up of the one that takes it.
   */
  readonly taken = new TakenEvents(() => this.leaseUntil - Date.now() > LEASE_MS / 4);

  constructor(private readonly deps: RelayDeps) {}

  start(): void {
    this.running ??= this.loop();
  }

  /**
   * Stops relaying. Called once this worker's transitions have finished (their writes may have
   * taken events over): what they handed over is recorded by a last pass before the lease is given
   * back, and so is in the log or read by the catching up of the next holder, who takes the lease
   * only after it. (A worker killed instead leaves them to that catching up, once its lease lapses.)
   */
  async close(): Promise<void> {
    this.stopping.abort();
    await this.running;
    if (this.leaseUntil <= Date.now()) return;
    await this.pass().catch((err) => this.deps.log.warn({ err }, 'event relay: the last pass failed; the next holder reads what it left'));
    this.leaseUntil = 0;
    this.deps.metrics.leader.set(0);
    await this.deps.leases.release(LEASE, this.holder).catch(() => undefined);
  }

  /**
   * One pass, when this worker holds the lease: the Redis checks when due, then up to a batch of
   * each outbox's documents, with the events this worker's writes handed over. Returns how many
   * events it relayed.
   */
  async pass(): Promise<number> {
    if (!(await this.holdLease())) return 0;
    const now = Date.now();
    if (now >= this.nextRedisCheck) {
      this.nextRedisCheck = now + REDIS_CHECK_MS;
      await this.checkRedis();
    }
    if (now >= this.nextRecentCheck) {
      this.nextRecentCheck = now + RECENT_CHECK_MS;
      await this.restore('check', new Date(now - RECENT_MS));
    }
    // (the checks may have taken a while: the lease is renewed, or found lost, before the outboxes are read)
    if (!(await this.holdLease())) return 0;
    // (catching up, every taken event is read: each is due within TAKEN_OUTBOX_DUE_MS of now)
    const dueBy = new Date(this.catchingUp ? now + TAKEN_OUTBOX_DUE_MS : now);
    const read = this.catchingUp || this.taken.size === 0 || now >= this.nextOutboxRead;
    const held = read ? await this.readOutboxes(dueBy) : [];
    const taken = this.taken.waitingNow();
    const docs = held.flatMap(({ docs }) => docs);
    this.catchingUp &&= held.some(({ docs }) => docs.length >= BATCH);
    if (docs.length === 0 && taken.length === 0) return 0;

    const all = inWriteOrder([...docs, ...taken]);
    // (an order written without taking its events over keeps those it had taken: recorded, they are only cleared)
    const entries = all.filter((entry) => !this.taken.isRecorded(entry.id));
    const added = entries.length > 0 ? await this.record(entries) : [];
    await Promise.all(held.map(({ outbox, docs }) => outbox.cleared(docs)));
    this.taken.recordedNow(entries, taken);

    const { metrics } = this.deps;
    const at = Date.now();
    metrics.recorded.inc(added.length);
    for (const event of added) metrics.lagSeconds.observe(Math.max(0, at - event.timestamp.getTime()) / 1000);
    return all.length;
  }

  /** Up to a batch of each outbox's documents due by `dueBy`; an empty read puts the next off (EMPTY_OUTBOX_MS). */
  private async readOutboxes(dueBy: Date): ReturnType<OutboxesReader['held']> {
    const held = await this.deps.outboxes.held(BATCH, dueBy);
    if (held.some(({ docs }) => docs.length > 0)) {
      this.emptyOutbox.reset();
      this.nextOutboxRead = 0;
    } else {
      this.nextOutboxRead = Date.now() + this.emptyOutbox.take();
    }
    return held;
  }

  /** Records `entries` (found recorded before: once) and queues what each owes. Returns those it added to the log. */
  private async record(entries: OutboxEntry[]): Promise<EventDoc[]> {
    const owed = await this.deps.fanOut.owedBy(entries);
    const { recorded, added } = await this.deps.events.record(
      entries.map((entry) => ({ ...entry, owed: owed.get(entry.id) ?? [] })),
      new Date(),
    );
    // what each event still owes (all of it when just recorded, what is left when found recorded
    // before), in the log's order: a subscription's oldest deliveries are the first dropped past its cap
    await this.queue([...recorded.values()].sort((a, b) => a._id - b._id).flatMap(deliveriesOf));
    return added;
  }

  /** Deliveries queued, one batch per subscription (webhooks/batch.ts); those still waiting are left as they are. */
  private queue(deliveries: DeliveryJobData[]): Promise<void> {
    return this.deps.deliveries.addBatches(deliveries);
  }

  private async loop(): Promise<void> {
    const { signal } = this.stopping;
    const idle = new DoublingPause(IDLE_PASS_MS);
    while (!signal.aborted) {
      let relayed = 0;
      let failed = false;
      try {
        relayed = await this.pass();
      } catch (err) {
        failed = true;
        this.deps.log.warn({ err }, 'event relay pass failed; trying again');
      }
      // (a failed pass pauses, catching up or not: MongoDB may be what failed)
      if (!failed && (relayed >= BATCH || this.catchingUp)) continue;
      if (relayed > 0) idle.reset();
      await sleep(relayed > 0 ? GATHER_MS : idle.take(), undefined, { signal }).catch(() => undefined);
    }
  }

  /** Takes or renews the lease when half of it is gone; true while this worker holds it. */
  private async holdLease(): Promise<boolean> {
    const now = Date.now();
    if (this.leaseUntil - now > LEASE_MS / 2) return true;
    const until = now + LEASE_MS;
    const held = await this.deps.leases.hold(LEASE, this.holder, new Date(now), new Date(until));
    if (held && this.leaseUntil <= now) {
      this.deps.log.info('event relay: this worker relays');
      this.catchingUp = true;
    }
    if (!held) {
      this.taken.forget();
      this.catchingUp = false;
    }
    this.leaseUntil = held ? until : 0;
    this.deps.metrics.leader.set(held ? 1 : 0);
    return held;
  }

  /** Redis without the relay's marker has lost its data (or is new): every owed delivery is queued again. */
  private async checkRedis(): Promise<void> {
    const marker = `${this.deps.prefix}:events:relay-marker`;
    if ((await this.deps.redis.get(marker)) !== null) return;
    const restored = await this.restore('redis-lost');
    if (restored === undefined) return; // the next holder restores it all
    await this.deps.redis.set(marker, new Date().toISOString());
    if (restored > 0) this.deps.log.warn({ restored }, 'redis had lost its data: owed webhook deliveries queued again from the event log');
  }

  /**
   * Queues again what events recorded since `since` (all, when absent) still owe; the deliveries
   * still queued are left as they are. Page by page, renewing the lease as it goes (a long restore
   * must not let another relay take it meanwhile); undefined when the lease was lost before the end.
   */
  private async restore(reason: 'redis-lost' | 'check', since?: Date): Promise<number | undefined> {
    let restored = 0;
    let afterSeq = 0;
    for (let page = RESTORE_PAGE; page === RESTORE_PAGE; ) {
      if (!(await this.holdLease())) return undefined;
      const owing = await this.deps.events.owing({ since, afterSeq, limit: RESTORE_PAGE });
      const deliveries = owing.flatMap(deliveriesOf);
      await this.queue(deliveries);
      this.deps.metrics.restored.inc({ reason }, deliveries.length);
      restored += deliveries.length;
      page = owing.length;
      afterSeq = owing.at(-1)?._id ?? afterSeq;
    }
    return restored;
  }
}
