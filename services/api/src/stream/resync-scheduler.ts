import type { Logger } from '@pos/shared/log';
import { withTimeout } from '@pos/shared/util/timeout';
import { pause } from '@pos/shared/util/pause';
import type { ApiMetrics } from '../metrics/api-metrics';
import type { ClientStream } from './client-stream';
import { readResync, ResyncNeeds, ResyncRepos } from './replay';

/**
 * Locations re-read together: three MongoDB commands (an aggregate, two finds, and a getMore
 * per 16 MiB of answer) for all of them, each served by an index with one range per location.
 * A few hundred ids keep each command's `$in` and its answer small.
 */
export const RESYNC_BATCH_LOCATIONS = 200;
/**
 * Batches a node reads at once: at most 2 × 3 commands of one node's resync reach MongoDB at a
 * time, so ten nodes that lose Redis together add 60 reads to the shared database, not one per stream.
 */
export const RESYNC_BATCHES_IN_FLIGHT = 2;
/** The pause before a slot reads its next batch: room for the node's requests between batches. */
export const RESYNC_BATCH_PAUSE_MS = 25;
/** A batch not read in this long counts as failed: a hung MongoDB must not hold streams for ever. */
const RESYNC_READ_TIMEOUT_MS = 10_000;
/** After a failed batch its slot waits this long, and its locations are read again. */
const RESYNC_RETRY_PAUSE_MS = 1_000;

export interface ResyncSchedulerOptions {
  repos: ResyncRepos;
  /** The streams of a location on this node (those waiting for a re-read take part). */
  streamsOf(locationId: string): Iterable<ClientStream>;
  metrics: Pick<ApiMetrics, 'streamResyncs' | 'streamResyncBatches'>;
  log: Logger;
}

/** What one re-read after a Redis reconnect has done so far, for its log line. */
interface Run {
  startedAt: number;
  locations: number;
  streams: number;
  batches: number;
  failed: number;
}

/**
 * The node's re-reads after a Redis reconnect: the locations whose streams wait for one are read
 * in batches (RESYNC_BATCH_LOCATIONS per batch, RESYNC_BATCHES_IN_FLIGHT at a time, a pause
 * between), so that a node's whole resync costs a few MongoDB commands per batch, not per stream.
 * Streams hold their live events until their location's read is in. No batch starts while the
 * subscriptions are down (`pause` to `resume`): a read then would not cover what is still being lost.
 */
export class ResyncScheduler {
  /** Locations waiting for a batch, in the order they asked. */
  private readonly pending = new Set<string>();
  private slots = 0;
  private paused = false;
  private run: Run | undefined;
  private readonly closing = new AbortController();

  constructor(private readonly options: ResyncSchedulerOptions) {}

  /** The subscriptions are lost: batches in flight finish, no new one starts. */
  pause(): void {
    this.paused = true;
  }

  /** The subscriptions are back: these locations are read (again), and any still waiting. */
  resume(locationIds: Iterable<string>): void {
    this.paused = false;
    for (const id of locationIds) this.pending.add(id);
    this.pump();
  }

  /** A stream of the location waits for a re-read (one that was reading its first replay, say). */
  request(locationId: string): void {
    this.pending.add(locationId);
    this.pump();
  }

  close(): void {
    this.closing.abort();
    this.pending.clear();
  }

  private get stopped(): boolean {
    return this.paused || this.closing.signal.aborted;
  }

  private pump(): void {
    while (!this.stopped && this.slots < RESYNC_BATCHES_IN_FLIGHT && this.pending.size > 0) {
      this.slots += 1;
      this.run ??= { startedAt: Date.now(), locations: 0, streams: 0, batches: 0, failed: 0 };
      void this.slot().finally(() => {
        this.slots -= 1;
        this.finishRun();
      });
    }
  }

  /** One of the batches in flight: reads batch after batch while locations wait. */
  private async slot(): Promise<void> {
    while (!this.stopped) {
      const batch = this.takeBatch();
      if (batch.length === 0) return;
      const read = await this.read(batch);
      if (read && this.pending.size === 0) return;
      await pause(read ? RESYNC_BATCH_PAUSE_MS : RESYNC_RETRY_PAUSE_MS, this.closing.signal);
      if (!read) for (const { locationId } of batch) this.pending.add(locationId);
    }
  }

  /** Up to a batch of waiting locations, each with its streams that wait for the read. */
  private takeBatch(): { locationId: string; streams: ClientStream[] }[] {
    const batch: { locationId: string; streams: ClientStream[] }[] = [];
    for (const locationId of this.pending) {
      if (batch.length >= RESYNC_BATCH_LOCATIONS) break;
      this.pending.delete(locationId);
      const streams = [...this.options.streamsOf(locationId)].filter((stream) => stream.awaitsResync);
      if (streams.length > 0) batch.push({ locationId, streams });
    }
    return batch;
  }

  /** Reads one batch and hands each stream its part; false when the read failed. */
  private async read(batch: { locationId: string; streams: ClientStream[] }[]): Promise<boolean> {
    const now = new Date();
    const needs: ResyncNeeds[] = batch.map(({ locationId, streams }) => {
      const parts = streams.map((stream) => stream.beginResync());
      return {
        locationId,
        ordersAbove: Math.min(...parts.map((part) => part.orderNumber)),
        commandsAbove: Math.min(...parts.map((part) => part.commandNumber)),
        changedSince: new Date(Math.min(...parts.map((part) => part.changedSince))),
        sessionIds: [...new Set(parts.flatMap((part) => (part.sessionId === undefined ? [] : [part.sessionId])))],
      };
    });
    const { metrics, log } = this.options;
    const run = this.run!;
    run.batches += 1;
    try {
      const reads = await withTimeout(
        readResync(this.options.repos, needs, now),
        RESYNC_READ_TIMEOUT_MS,
        'stream resync read',
      );
      metrics.streamResyncBatches.inc({ outcome: 'read' });
      for (const { locationId, streams } of batch) {
        run.locations += 1;
        run.streams += streams.length;
        for (const stream of streams) stream.takeResync(reads.get(locationId)!, now);
      }
      return true;
    } catch (err) {
      metrics.streamResyncBatches.inc({ outcome: 'failed' });
      run.failed += 1;
      log.warn(
        { err: (err as Error).message, locations: batch.length },
        'streams could not be re-read after redis reconnect; trying again',
      );
      for (const { streams } of batch) for (const stream of streams) stream.resyncFailed();
      return false;
    }
  }

  /** When nothing waits or is read any more, the run is over: one log line and a count. */
  private finishRun(): void {
    const run = this.run;
    if (!run || this.slots > 0 || this.pending.size > 0 || this.closing.signal.aborted) return;
    this.run = undefined;
    if (run.batches === 0) return; // its streams had all ended, or were still reading their first replay
    this.options.metrics.streamResyncs.inc();
    const { startedAt, ...figures } = run;
    this.options.log.info({ ...figures, ms: Date.now() - startedAt }, 'streams re-read after redis reconnect');
  }
}
