/**
 * The benchmark's results as written to bench/results/*.json: their shape, shared by the run
 * that measures them, the summary that rates them (computed when read, never stored) and the
 * report that prints them.
 */
import type { ArchiveScenario } from './archive-load';
import type { OverloadScenario } from './overload';
import type { ChainStreamsLevel } from './chain-streams';
import type { FanOutLevel, StreamMemory } from './fan-out';
import type { PollResult, StatusUpdateResult, Variant } from './service-load';
import type { PresenceCost } from './presence-cost';
import type { StreamsLevel } from './streams';

export interface Machine {
  nproc: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  os: string;
  redis: string;
  mongo: string;
  ulimitNofile: string;
  /** 1, 5 and 15 minute load averages at the start and at the end of the run. */
  loadAverageStart: number[];
  loadAverageEnd?: number[];
}

/** The commit a run measured, and whether the working tree held changes beyond it. */
export interface SourceCommit {
  sha: string;
  dirty: boolean;
}

export interface BenchResults {
  startedAt: string;
  durationSeconds: number;
  /** The code measured; absent from runs made before it was recorded. */
  commit?: SourceCommit;
  machine: Machine;
  settings: { secondsPerRun: number; maxOpsPerRun: number; warmupOps: number; fanOutSubmissions: number };
  statusUpdates: StatusUpdateResult[];
  /** The collections' sizes for the status updates and polls (absent from runs before they were stated). */
  collections?: CollectionSizes;
  /** Each with its floor. */
  locationPolls: PollResult[];
  /** The service with a feature switched on (absent when none is listed). */
  variants?: VariantResult[];
  /** Presence's share of a request (always on, so not a variant): bench/presence-cost.ts. */
  presence?: PresenceCost;
  fanOut: FanOutLevel[];
  streamMemory: StreamMemory;
  /** Absent from runs made before the scenario existed. */
  archive?: ArchiveScenario;
  /** Past the workers' capacity: shedding and recovery (absent from runs made before the scenario existed). */
  overload?: OverloadScenario;
  /** The 10,000-stream level on one API node (absent with BENCH_STREAMS=0). */
  streams?: StreamsLevel;
  /** The streams level in a chain's shape: two streams per location (absent with BENCH_CHAIN_STREAMS=0 and from earlier runs). */
  chainStreams?: ChainStreamsLevel;
  /** Absent when the run left the cluster out (BENCH_ONLY). */
  cluster?: ClusterResults;
  logs: string;
}

/** A feature's cost row: the status updates and polls at 16 clients of a deployment with its settings. */
export interface VariantResult extends Pick<Variant, 'name' | 'env'> {
  /** At each of its concurrencies, with its own floor when it has one (runs before 0.6.0: `statusUpdate`, at 16 clients). */
  statusUpdates?: StatusUpdateResult[];
  statusUpdate?: StatusUpdateResult;
  poll: PollResult;
}

/** The same scenarios on a Redis Cluster. */
export interface ClusterResults {
  shape: string;
  partitions: number;
  statusUpdates: StatusUpdateResult[];
  fanOut: FanOutLevel[];
}

/** The collections the status updates and polls ran on (the stand-in slows as a collection grows; service and floor run on the same). */
export interface CollectionSizes {
  /** Orders the status updates cycle through, over this many locations. */
  statusOrders: number;
  locations: number;
  /** PLACED orders of the polled location, per poll level. */
  pollOrders: number[];
  /** The event log, trimmed to its newest this many. */
  eventLogKept: number;
  /** How they are kept at that size. */
  note: string;
}

/** What latest.json keeps of a run: its figures, not the raw samples (BENCH_RAW=1 writes those to raw.json). */
export function summaryOnly(results: BenchResults): BenchResults {
  return JSON.parse(JSON.stringify(results, (key, value: unknown) => (key === 'redisByCommand' || key === 'errorSamples' ? undefined : value))) as BenchResults;
}

/** JSON with each object that fits in a line on one line (a row of figures), so that a run's file reads as tables. */
export function compactJson(value: unknown, indent = ''): string {
  const flat = JSON.stringify(value);
  const width = value !== null && typeof value === 'object' && !Array.isArray(value) && indent.length > 2 ? 320 : 160;
  if (value === null || typeof value !== 'object' || flat.length + indent.length <= width) return indent === '' ? `${flat}\n` : flat;
  const inner = `${indent}  `;
  const items = Array.isArray(value)
    ? value.map((item) => `${inner}${compactJson(item, inner)}`)
    : Object.entries(value).map(([key, item]) => `${inner}${JSON.stringify(key)}: ${compactJson(item, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return `${open}\n${items.join(',\n')}\n${indent}${close}${indent === '' ? '\n' : ''}`;
}
