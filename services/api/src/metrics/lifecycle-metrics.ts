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

/**
 * The order lifecycle's figures, read at scrape time like the queue depth. The lifecycle job runs
 * once across all workers, on whichever worker takes it, so its figures belong to the deployment
 * rather than to a worker process: the run records them in Redis and every API node reports them
 * (aggregate with `max`, not `sum`). The collection sizes come from MongoDB's metadata.
 */
export function registerLifecycleMetrics(registry: Registry, sources: LifecycleMetricSources): void {
  const registers = [registry];

  const stats = scrapeRead(() => boundedRead(readLifecycleStats(sources.redis, sources.prefix), 'lifecycle stats'));

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
  new Counter({
    name: 'pos_lifecycle_runs_total',
    help: 'Runs of the order lifecycle job (archive, cart expiry, purges), across all workers',
    registers,
    async collect() {
      this.reset();
      const s = await stats();
      if (s) this.inc(s.runs);
    },
  });
  new Counter({
    name: 'pos_lifecycle_run_seconds_total',
    help: 'Time spent in lifecycle runs; divided by pos_lifecycle_runs_total, the mean run duration',
    registers,
    async collect() {
      this.reset();
      const s = await stats();
      if (s) this.inc(s.runSeconds);
    },
  });
  new Counter({
    name: 'pos_lifecycle_documents_total',
    help: 'Documents the lifecycle job handled: orders archived, carts expired, archived orders purged, expired commands purged',
    labelNames: ['action'],
    registers,
    async collect() {
      this.reset();
      const s = await stats();
      if (s) for (const name of LIFECYCLE_COUNTS) this.inc({ action: ACTION[name] }, s.totals[name]);
    },
  });
  new Gauge({
    name: 'pos_lifecycle_last_run_documents',
    help: 'Documents the last lifecycle run handled, by action',
    labelNames: ['action'],
    registers,
    async collect() {
      this.reset();
      const last = (await stats())?.last;
      if (last) for (const name of LIFECYCLE_COUNTS) this.set({ action: ACTION[name] }, last[name]);
    },
  });
  /** A figure of the last run, when there is one. */
  const lastRunGauge = (name: string, help: string, value: (last: NonNullable<LifecycleStats['last']>) => number) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        this.reset();
        const last = (await stats())?.last;
        if (last) this.set(value(last));
      },
    });
  lastRunGauge('pos_lifecycle_last_run_duration_seconds', 'Duration of the last lifecycle run', (last) => last.durationMs / 1000);
  lastRunGauge(
    'pos_lifecycle_last_run_timestamp_seconds',
    'When the last lifecycle run finished (Unix time); alert when it falls far behind',
    (last) => last.finishedAt / 1000,
  );
  lastRunGauge(
    'pos_lifecycle_last_run_complete',
    '1 when the last lifecycle run finished everything due, 0 when it stopped at its time budget with a backlog',
    (last) => (last.complete ? 1 : 0),
  );
}
