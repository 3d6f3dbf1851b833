/**
 * The event relay: moves the events that writes left in the outboxes (events/outbox.ts) to the
 * event log, and queues the webhook deliveries each owes. Every worker runs one; one at a time
 * works (a lease in MongoDB), the others wait to take over. Nothing of it lives in memory alone,
 * so it is safe wherever it is stopped or killed:
 *
 * - an event is cleared from its document's outbox only after it is recorded and its deliveries
 *   are queued; a relay that stops before then leaves it there, and the next pass (its own or the
 *   next holder's) records it again (found recorded: once) and queues what it still owes (the
 *   same webhook-ids: once);
 * - a pass carries at most PASS_EVENTS events, so that it ends within a drain; a relay that stops
 *   gives its lease back at once, so that another goes on without waiting for it to lapse, and a
 *   killed one's is taken over once another has seen it unrenewed for LEASE_MS (store/leases.ts);
 * - a delivery is owed by its event until it settles (delivery.ts), so a delivery queue that Redis
 *   lost (a flush, a restart without persistence, a failover) is rebuilt from the event log: at
 *   once when the relay sees Redis lost its data (its marker key gone), and every minute for the
 *   recent events (what a failover may have lost).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from '@pos/shared/log';
import type { RedisClient } from '@pos/shared/redis';
import type { EventLogRepo } from '@pos/shared/store/event-log';
import type { LeasesRepo } from '@pos/shared/store/leases';
import type { EventDoc, OutboxEntry } from '@pos/shared/store/documents';
import type { HeldEvents, OutboxesReader } from '@pos/shared/store/outboxes';
import type { DeliveryJobData } from '@pos/shared/queue/webhook-queue';
import type { DeliveryQueue } from '@pos/shared/webhooks/delivery-queue';
import { deliveriesOf, type WebhookFanOut } from '@pos/shared/webhooks/fan-out';
import { DoublingPause } from '@pos/shared/util/doubling-pause';
import { withTimeout } from '@pos/shared/util/timeout';
import type { RelayMetrics } from '../metrics';

/** Documents read from each outbox per pass (all outboxes in one command). */
const BATCH = 128;
/**
 * The most events one pass records: whole documents, oldest first, up to this many (a document
 * holding more goes alone). A pass is a few commands whatever it carries; this keeps each of them,
 * and so the pass, short enough to end within a drain on a slow database.
 */
export const PASS_EVENTS = 1_000;
/** How long a stopping relay waits for its pass under way, and for the lease's release. */
const STOP_MS = 2_000;
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
  /** How long its lease lasts unrenewed; LEASE_MS unless a test shortens it. */
  leaseMs?: number;
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

/** What one read of the outboxes found, and the part of it a pass takes. */
export interface PassPlan<O> {
  /** Each outbox's documents the pass records and clears. */
  taken: { outbox: O; docs: HeldEvents[] }[];
  /** Events in the documents read, and when the oldest of them was written (undefined: none). */
  waiting: number;
  oldest?: number;
  /** More waits than this pass takes: the next follows at once. */
  more: boolean;
}

/**
 * The documents a pass takes from what a read found: oldest first (by their first event), whole,
 * up to `maxEvents` events (one at least). A read that filled a batch of an outbox leaves more.
 */
export function planPass<O>(held: { outbox: O; docs: HeldEvents[] }[], batch: number, maxEvents: number): PassPlan<O> {
  const all = held.flatMap(({ docs }, o) => docs.map((doc) => ({ doc, o, first: doc.outbox[0]?.at.getTime() ?? 0 })));
  all.sort((a, b) => a.first - b.first);
  const waiting = all.reduce((sum, { doc }) => sum + doc.outbox.length, 0);
  const taken = held.map(({ outbox }) => ({ outbox, docs: [] as HeldEvents[] }));
  let events = 0;
  let left = false;
  for (const { doc, o } of all) {
    if (events > 0 && events + doc.outbox.length > maxEvents) {
      left = true;
      break;
    }
    events += doc.outbox.length;
    taken[o]!.docs.push(doc);
  }
  const oldest = all.find(({ doc }) => doc.outbox.length > 0)?.first;
  return {
    taken: taken.filter(({ docs }) => docs.length > 0),
    waiting,
    ...(oldest === undefined ? {} : { oldest }),
    more: left || held.some(({ docs }) => docs.length >= batch),
  };
}

export class OutboxRelay {
  private readonly holder = randomUUID();
  /** Until when (performance.now()) this worker holds the lease. */
  private leaseUntil = 0;
  private nextRedisCheck = 0;
  private nextRecentCheck = Date.now() + RECENT_CHECK_MS;
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly deps: RelayDeps) {}

  start(): void {
    this.running ??= this.loop();
  }

  /**
   * Stops relaying, at once: nothing waits in this process, only in the outboxes. A pass under
   * way is given STOP_MS to end (what it has not cleared, the next holder records again, once);
   * then the lease is given back, so that the next holder need not wait for it to lapse.
   */
  async close(): Promise<void> {
    this.stopping.abort();
    if (this.running)
      await withTimeout(this.running, STOP_MS, "the event relay's pass").catch((err: Error) =>
        this.deps.log.warn(
          { err: err.message },
          'event relay: its pass goes on as it stops; the next holder records what it leaves',
        ),
      );
    if (this.leaseUntil <= performance.now()) return;
    this.leaseUntil = 0;
    this.deps.metrics.leader.set(0);
    this.deps.metrics.backlog.set(0);
    this.deps.metrics.backlogOldest.set(0);
    await withTimeout(this.deps.leases.release(LEASE, this.holder), STOP_MS, "the event relay's lease release").catch(
      () => undefined,
    );
  }

  /**
   * One pass, when this worker holds the lease: the Redis checks when due, then the oldest of
   * what the outboxes hold, up to PASS_EVENTS events. Returns how many it relayed, and whether
   * more waits.
   */
  async pass(): Promise<{ relayed: number; more: boolean }> {
    const none = { relayed: 0, more: false };
    if (!(await this.holdLease())) return none;
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
    if (!(await this.holdLease())) return none;
    const plan = planPass(await this.deps.outboxes.held(BATCH), BATCH, PASS_EVENTS);
    const { metrics } = this.deps;
    metrics.backlog.set(plan.waiting);
    metrics.backlogOldest.set(plan.oldest === undefined ? 0 : Math.max(0, Date.now() - plan.oldest) / 1000);
    const entries = inWriteOrder(plan.taken.flatMap(({ docs }) => docs));
    const added = entries.length > 0 ? await this.record(entries) : [];
    await Promise.all(plan.taken.map(({ outbox, docs }) => outbox.cleared(docs)));

    const at = Date.now();
    metrics.recorded.inc(added.length);
    for (const event of added) metrics.lagSeconds.observe(Math.max(0, at - event.timestamp.getTime()) / 1000);
    return { relayed: entries.length, more: plan.more };
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
      let pass = { relayed: 0, more: false };
      let failed = false;
      try {
        pass = await this.pass();
      } catch (err) {
        failed = true;
        this.deps.log.warn({ err }, 'event relay pass failed; trying again');
      }
      // (a failed pass pauses: MongoDB may be what failed)
      if (!failed && pass.more) continue;
      if (pass.relayed > 0) idle.reset();
      await sleep(pass.relayed > 0 ? GATHER_MS : idle.take(), undefined, { signal }).catch(() => undefined);
    }
  }

  /** Takes or renews the lease when half of it is gone; true while this worker holds it (never once it stops). */
  private async holdLease(): Promise<boolean> {
    if (this.stopping.signal.aborted) return false;
    const now = performance.now();
    const leaseMs = this.deps.leaseMs ?? LEASE_MS;
    if (this.leaseUntil - now > leaseMs / 2) return true;
    const until = await this.deps.leases.hold(LEASE, this.holder, leaseMs);
    const held = until !== undefined;
    if (held && this.leaseUntil <= now) this.deps.log.info('event relay: this worker relays');
    this.leaseUntil = until ?? 0;
    this.deps.metrics.leader.set(held ? 1 : 0);
    if (!held) {
      this.deps.metrics.backlog.set(0);
      this.deps.metrics.backlogOldest.set(0);
    }
    return held;
  }

  /** Redis without the relay's marker has lost its data (or is new): every owed delivery is queued again. */
  private async checkRedis(): Promise<void> {
    const marker = `${this.deps.prefix}:events:relay-marker`;
    if ((await this.deps.redis.get(marker)) !== null) return;
    const restored = await this.restore('redis-lost');
    if (restored === undefined) return; // the next holder restores it all
    await this.deps.redis.set(marker, new Date().toISOString());
    if (restored > 0)
      this.deps.log.warn(
        { restored },
        'redis had lost its data: owed webhook deliveries queued again from the event log',
      );
  }

  /**
   * Queues again what events recorded since `since` (all, when absent) still owe; the deliveries
   * still queued are left as they are. Page by page, renewing the lease as it goes (a long restore
   * must not let another relay take it meanwhile); undefined when the lease was lost before the end.
   */
  private async restore(reason: 'redis-lost' | 'check', since?: Date): Promise<number | undefined> {
    let restored = 0;
    let afterSeq = 0;
    for (let page = RESTORE_PAGE; page === RESTORE_PAGE;) {
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
