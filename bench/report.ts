/** The benchmark's results: their JSON shape, the ratios to the ceilings, and the printed tables. */
import type { ArchiveScenario } from './archive-load';
import type { Ceilings } from './ceilings';
import type { FanOutLevel, StreamMemory } from './fan-out';
import type { LoadResult } from './load';
import { formatCpu } from './redis-cpu';
import type { StatusUpdateResult } from './service-load';

export interface Machine {
  nproc: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  os: string;
  redis: string;
  mongo: string;
  ulimitNofile: string;
}

/** A service figure against its ceiling: throughput share and latency multiple. */
export interface Ratio {
  ceiling: string;
  ceilingRps: number;
  ceilingP50Ms: number;
  /** Service throughput / ceiling throughput. */
  rpsRatio: number;
  /** Service p50 / ceiling p50. */
  p50Multiple: number;
}

export interface BenchResults {
  startedAt: string;
  durationSeconds: number;
  machine: Machine;
  settings: { secondsPerRun: number; maxOpsPerRun: number; warmupOps: number; fanOutSubmissions: number };
  statusUpdates: (StatusUpdateResult & { vs: Ratio })[];
  locationPolls: (LoadResult & { records: number; vs: Ratio })[];
  fanOut: (FanOutLevel & { vs: Omit<Ratio, 'ceilingRps' | 'rpsRatio'> })[];
  streamMemory: StreamMemory;
  /** Absent from runs made before the scenario existed. */
  archive?: ArchiveScenario;
  ceilings: Ceilings;
  cluster: ClusterResults;
  logs: string;
}

/** The same scenarios on a Redis Cluster. */
export interface ClusterResults {
  shape: string;
  partitions: number;
  statusUpdates: StatusUpdateResult[];
  fanOut: FanOutLevel[];
}

const ratio = (a: number, b: number, digits = 2) => (b > 0 ? Math.round((a / b) * 10 ** digits) / 10 ** digits : 0);

export function versus(service: LoadResult, ceilingName: string, ceiling: LoadResult): Ratio {
  return {
    ceiling: ceilingName,
    ceilingRps: ceiling.rps,
    ceilingP50Ms: ceiling.p50Ms,
    rpsRatio: ratio(service.rps, ceiling.rps, 3),
    p50Multiple: ratio(service.p50Ms, ceiling.p50Ms, 1),
  };
}

function table(headers: string[], rows: (string | number)[][]): string {
  const lines = [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/** Markdown tables, readable in a terminal and pasteable into the README. */
export function renderTables(r: BenchResults): string {
  const m = r.machine;
  const out: string[] = [];
  out.push(
    `Machine: ${m.nproc} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}; Redis ${m.redis}; MongoDB: ${m.mongo}. ` +
      `Everything (load generator, 2 API nodes, worker, Redis, MongoDB) on this machine, over loopback. ` +
      `${r.settings.secondsPerRun} s or ${r.settings.maxOpsPerRun} operations per run after ${r.settings.warmupOps} warm-up operations; run took ${r.durationSeconds} s.`,
  );
  out.push('', '**Status updates** (PUT statusupdate over HTTP: API, queue, worker, MongoDB write, reply). Ceiling: bare BullMQ add-and-wait at the same concurrency. API job mean: the enqueue-to-reply time the API itself reports on /metrics.', '');
  out.push(
    table(
      ['clients', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'API job mean ms', 'ceiling req/s', 'ceiling p50 ms', 'share of ceiling', 'p50 multiple'],
      r.statusUpdates.map((s) => [s.concurrency, s.rps, s.p50Ms, s.p99Ms, s.errors, s.serverJobMeanMs, s.vs.ceilingRps, s.vs.ceilingP50Ms, s.vs.rpsRatio, s.vs.p50Multiple]),
    ),
  );
  out.push('', '**Location polls** (GET /orders/location: authentication, two MongoDB reads, serialisation). Ceiling: bare Koa answering the same number of records.', '');
  out.push(
    table(
      ['PLACED orders', 'clients', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'ceiling req/s', 'ceiling p50 ms', 'share of ceiling', 'p50 multiple'],
      r.locationPolls.map((s) => [s.records, s.concurrency, s.rps, s.p50Ms, s.p99Ms, s.errors, s.vs.ceilingRps, s.vs.ceilingP50Ms, s.vs.rpsRatio, s.vs.p50Multiple]),
    ),
  );
  out.push(
    '',
    '**Stream fan-out** (customer submit to arrival on every open stream, streams split over 2 API nodes). Ceiling: one bare BullMQ add-and-wait (the queue hop, which ends with a pub/sub message).',
    '',
  );
  out.push(
    table(
      ['open streams', 'submissions', 'p50 ms', 'p99 ms', 'max ms', 'last stream p50 ms', 'missed', 'ceiling p50 ms', 'p50 multiple'],
      r.fanOut.map((f) => [f.streams, f.submissions, f.p50Ms, f.p99Ms, f.maxMs, f.lastArrivalP50Ms, f.missed, f.vs.ceilingP50Ms, f.vs.p50Multiple]),
    ),
  );
  const mem = r.streamMemory;
  out.push(
    '',
    `**API memory per open stream** (process metrics from each node's /metrics, after a full GC, with the first level's streams open and with all ${mem.streams})`,
    '',
  );
  out.push(
    table(
      ['API node', 'streams', 'RSS MiB', 'heap used MiB'],
      mem.nodes.map((n, i) => [i + 1, `${n.streamsBefore} → ${n.streams}`, `${n.rssBeforeMiB} → ${n.rssAfterMiB}`, `${n.heapUsedBeforeMiB} → ${n.heapUsedAfterMiB}`]),
    ),
  );
  out.push('', `Per added stream: ${mem.rssPerStreamKiB} KiB RSS, ${mem.heapPerStreamKiB} KiB heap (mean of the nodes).`);
  if (r.archive) out.push('', renderArchive(r.archive));
  const c = r.ceilings;
  out.push('', '**Ceilings** (same run)', '');
  out.push(
    table(['ceiling', 'clients', 'ops/s', 'p50 ms', 'p99 ms'], [
      ...c.koa.map((k) => ['bare Koa JSON route (empty list)', k.concurrency, k.rps, k.p50Ms, k.p99Ms]),
      ...c.koaPayload.map((k) => [`bare Koa JSON route (${k.records} records)`, k.concurrency, k.rps, k.p50Ms, k.p99Ms]),
      ...c.bullmq.map((b) => ['BullMQ add and wait for reply', b.concurrency, b.rps, b.p50Ms, b.p99Ms]),
      ...c.redis.map((x) => ['Redis SET (one connection)', x.concurrency, x.rps, x.p50Ms, x.p99Ms]),
      ['Redis pub/sub hop', 1, c.pubsubHop.rps, c.pubsubHop.p50Ms, c.pubsubHop.p99Ms],
    ]),
  );
  out.push('', renderClusterTable(r.cluster, r));
  return out.join('\n');
}

/** The cluster rows, next to the same scenarios on one Redis when those ran. */
export function renderClusterTable(cluster: ClusterResults, single: Pick<BenchResults, 'statusUpdates' | 'fanOut'> | undefined): string {
  const concurrencies = new Set(cluster.statusUpdates.map((s) => s.concurrency));
  const streams = new Set(cluster.fanOut.map((f) => f.streams));
  const status = (where: string, rows: StatusUpdateResult[]) =>
    rows
      .filter((s) => concurrencies.has(s.concurrency))
      .map((s) => [where, `status updates, ${s.locations} locations`, s.concurrency, s.rps, s.p50Ms, s.p99Ms, s.errors, formatCpu(s.redisCpu)]);
  const fanOut = (where: string, rows: FanOutLevel[]) =>
    rows.filter((f) => streams.has(f.streams)).map((f) => [where, 'stream fan-out (submit to arrival)', f.streams, '', f.p50Ms, f.p99Ms, f.missed, formatCpu(f.redisCpu)]);
  const on = `cluster (${cluster.shape}, ${cluster.partitions} partitions)`;
  return [
    `**On a Redis Cluster** (${cluster.shape}, started from redis-server on this machine; the work queue in ${cluster.partitions} partitions, two on each master) next to one Redis. Redis CPU: each process's user + system time over the measured run, in % of one core (from /proc). The fan-out's errors column is streams missed.`,
    '',
    table(
      ['Redis', 'scenario', 'clients / streams', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'Redis CPU'],
      [...(single ? status('one Redis', single.statusUpdates) : []), ...status(on, cluster.statusUpdates), ...(single ? fanOut('one Redis', single.fanOut) : []), ...fanOut(on, cluster.fanOut)],
    ),
  ].join('\n');
}

/** The orders-piling-up scenario: fresh against 10,000 finished orders, and the ratio. */
export function renderArchive(a: ArchiveScenario): string {
  const env = Object.entries(a.settings.lifecycle)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  const out = [
    `**Orders piling up** (status updates and polls at ${a.settings.concurrency} clients, on a fresh database and after ${a.variants[1]?.finishedBefore ?? 0} orders were created and completed through the service; ` +
      `the lifecycle job running in both (${env}) while a register finishes ${a.settings.churnPerSecond} new orders a second; ` +
      `${a.settings.rounds} alternating rounds of ${a.settings.secondsPerRun} s per measure and variant, the median round shown)`,
    '',
    table(
      ['database', 'status req/s', 'status p50 ms', 'status p99 ms', 'poll req/s', 'poll p50 ms', 'poll p99 ms', 'errors', 'hot docs', 'archived docs', 'job runs (mean ms)', 'archived in runs'],
      a.variants.map((v) => [
        v.name === 'fresh' ? 'fresh' : `${v.finishedBefore} finished before`,
        v.statusUpdates.rps,
        v.statusUpdates.p50Ms,
        v.statusUpdates.p99Ms,
        v.polls.rps,
        v.polls.p50Ms,
        v.polls.p99Ms,
        v.statusUpdates.errors + v.polls.errors,
        `${v.hotAtStart} → ${v.hotAtEnd}`,
        `${v.archivedAtStart} → ${v.archivedAtEnd}`,
        `${v.runs} (${v.runMeanMs})`,
        v.archivedDuringRuns,
      ]),
    ),
    '',
    `Backlog over fresh: status update p50 ${a.ratio.statusP50} x, throughput ${a.ratio.statusRps} x; poll p50 ${a.ratio.pollP50} x, throughput ${a.ratio.pollRps} x. ` +
      `Seeding took ${a.variants[1]?.seedSeconds ?? 0} s; the job had archived everything ${a.variants[1]?.catchUpSeconds ?? 0} s after the last order finished.`,
  ];
  return out.join('\n');
}
