import { Counter, Gauge, Registry } from 'prom-client';
import { LIFECYCLE_COUNTS, LifecycleCounts, LifecycleStats, readLifecycleStats } from '@pos/shared/queue/lifecycle';
import type { RedisClient } from '@pos/shared/redis';
import { boundedRead, scrapeRead } from './scrape-read';

/** The `action` label of each count. */
const ACTION: Record<keyof LifecycleCounts, string> = {
  archived: 'archived',
  expired: 'expired',
  purged: 'purged',
  commandsPurged: 'commands_purged',
  deliveriesPurged: 'webhook_deliveries_purged',
  auditPurged: 'audit_purged',
  eventsPurged: 'events_purged',
  appliedJobsPurged: 'applied_jobs_purged',
};

export interface LifecycleMetricSources {
  redis: Pick<RedisClient, 'hgetall'>;
  prefix: string;
  orders: { count(): Promise<number> };
  archive: { count(): Promise<number> };
}

/** A figure of the lifecycle's, as data: what it reports of the runs' stats, by labels. */
interface Figure {
  kind: 'counter' | 'gauge';
  name: string;
  help: string;
  labelNames?: string[];
  read(stats: LifecycleStats): [labels: Record<string, string>, value: number][];
}

/** A figure of the last run, when there is one. */
const lastRun =
  (value: (last: NonNullable<LifecycleStats['last']>) => number) =>
  (stats: LifecycleStats): [Record<string, string>, number][] =>
    stats.last ? [[{}, value(stats.last)]] : [];

const FIGURES: Figure[] = [
  {
    kind: 'counter',
    name: 'pos_lifecycle_runs_total',
    help: 'Runs of the order lifecycle job (archive, cart expiry, purges), across all workers',
    read: (s) => [[{}, s.runs]],
  },
  {
    kind: 'counter',
    name: 'pos_lifecycle_run_seconds_total',
    help: 'Time spent in lifecycle runs; divided by pos_lifecycle_runs_total, the mean run duration',
    read: (s) => [[{}, s.runSeconds]],
  },
  {
    kind: 'counter',
    name: 'pos_lifecycle_documents_total',
    help:
      'Documents the lifecycle job handled: orders archived, carts ' +
      'expired, archived orders purged, expired commands purged',
    labelNames: ['action'],
    read: (s) => LIFECYCLE_COUNTS.map((name) => [{ action: ACTION[name] }, s.totals[name]]),
  },
  {
    kind: 'gauge',
    name: 'pos_lifecycle_last_run_documents',
    help: 'Documents the last lifecycle run handled, by action',
    labelNames: ['action'],
    read: (s) => (s.last ? LIFECYCLE_COUNTS.map((name) => [{ action: ACTION[name] }, s.last![name]]) : []),
  },
  {
    kind: 'gauge',
    name: 'pos_lifecycle_last_run_duration_seconds',
    help: 'Duration of the last lifecycle run',
    read: lastRun((last) => last.durationMs / 1000),
  },
  {
    kind: 'gauge',
    name: 'pos_lifecycle_last_run_timestamp_seconds',
    help: 'When the last lifecycle run finished (Unix time); alert when it falls far behind',
    read: lastRun((last) => last.finishedAt / 1000),
  },
  {
    kind: 'gauge',
    name: 'pos_lifecycle_last_run_complete',
    help: '1 when the last lifecycle run finished everything due, 0 when it stopped at its time budget with a backlog',
    read: lastRun((last) => (last.complete ? 1 : 0)),
  },
];

/**
 * The order lifecycle's figures, read at scrape time like the queue depth. The lifecycle job runs
 * once across all workers, on whichever worker takes it, so its figures belong to the deployment
 * rather than to a worker process: the run records them in Redis and every API node reports them
 * (aggregate with `max`, not `sum`). The collection sizes come from MongoDB's metadata.
 */
export function registerLifecycleMetrics(registry: Registry, sources: LifecycleMetricSources): void {
  const registers = [registry];
  new Gauge({
    name: 'pos_order_documents',
    help: 'Documents in the hot orders collection and in the order archive (MongoDB metadata, read at scrape time)',
    labelNames: ['collection'],
    registers,
    async collect() {
      this.reset();
      const count = (what: { count(): Promise<number> }) => boundedRead(what.count(), 'collection count');
      const [orders, archive] = await Promise.all([count(sources.orders), count(sources.archive)]);
      if (orders !== undefined) this.set({ collection: 'orders' }, orders);
      if (archive !== undefined) this.set({ collection: 'orderArchive' }, archive);
    },
  });
  // one read of the stats per scrape, whichever figure asks first
  const stats = scrapeRead(() => boundedRead(readLifecycleStats(sources.redis, sources.prefix), 'lifecycle stats'));
  for (const figure of FIGURES) {
    const definition = { name: figure.name, help: figure.help, labelNames: figure.labelNames ?? [], registers };
    if (figure.kind === 'counter') {
      new Counter({
        ...definition,
        async collect() {
          this.reset();
          const read = await stats();
          if (read) for (const [labels, value] of figure.read(read)) this.inc(labels, value);
        },
      });
    } else {
      new Gauge({
        ...definition,
        async collect() {
          this.reset();
          const read = await stats();
          if (read) for (const [labels, value] of figure.read(read)) this.set(labels, value);
        },
      });
    }
  }
}
