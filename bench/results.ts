/** The shape of bench/results/*.json, shared by the run, its summary (computed when read) and the report. */
import type { ArchiveScenario } from './archive-load';
import type { MenuOrdersRow, MenuPublish, MenuRead } from './menu-load';
import type { OverloadScenario } from './overload';
import type { PollResult, StatusUpdateResult, Variant } from './service-load';
import type { PresenceCost } from './presence-cost';
import type { RelayThroughput } from './relay-throughput';
import type { ChainStreamsLevel, FanOutLevel, StreamsLevel } from './streams';

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

/** Each scenario's figures; a scenario left out (BENCH_ONLY, a level set to 0) is absent. */
export interface BenchResults {
  startedAt: string;
  durationSeconds: number;
  /** The code measured, and whether the working tree held changes beyond it. */
  commit?: { sha: string; dirty: boolean };
  machine: Machine;
  settings: { secondsPerRun: number; maxOpsPerRun: number; warmupOps: number; fanOutSubmissions: number };
  statusUpdates: StatusUpdateResult[];
  collections?: CollectionSizes;
  locationPolls: PollResult[];
  variants?: VariantResult[];
  /** Presence's share of a request (always on, so not a variant). */
  presence?: PresenceCost;
  /** What one event relay sustains, on a backlog of its own. */
  relay?: RelayThroughput;
  fanOut: FanOutLevel[];
  archive?: ArchiveScenario;
  /**
   * Customer orders priced from a menu against the same without one, the menu read in
   * full and as a 304, one menu published to many locations.
   */
  menuOrders?: MenuOrdersRow[];
  menuRead?: MenuRead;
  menuPublish?: MenuPublish;
  overload?: OverloadScenario;
  streams?: StreamsLevel;
  chainStreams?: ChainStreamsLevel;
  cluster?: ClusterResults;
  logs: string;
}

/** A feature's cost row: the status updates and polls at 16 clients of a deployment with its settings. */
export interface VariantResult extends Pick<Variant, 'name' | 'env'> {
  /** At each of its concurrencies, with its own floor when it has one. */
  statusUpdates: StatusUpdateResult[];
  poll: PollResult;
}

export interface ClusterResults {
  shape: string;
  partitions: number;
  statusUpdates: StatusUpdateResult[];
  fanOut: FanOutLevel[];
}

/**
 * The collections the status updates and polls ran on (the stand-in slows as a
 * collection grows; service and floor run on the same).
 */
export interface CollectionSizes {
  /**
   * Orders the status updates cycle through, over this many locations;
   * PLACED orders per poll level; the event log's size.
   */
  statusOrders: number;
  locations: number;
  pollOrders: number[];
  eventLogKept: number;
  /** How they are kept at that size. */
  note: string;
}

/** What latest.json keeps of a run: its figures, not the raw samples (BENCH_RAW=1 writes those to raw.json). */
export function summaryOnly(results: BenchResults): BenchResults {
  return JSON.parse(
    JSON.stringify(results, (key, value: unknown) =>
      key === 'redisByCommand' || key === 'errorSamples' ? undefined : value,
    ),
  ) as BenchResults;
}

/** JSON with each object that fits in a line on one line (a row of figures), so that a run's file reads as tables. */
export function compactJson(value: unknown, indent = ''): string {
  const flat = JSON.stringify(value);
  const width = value !== null && typeof value === 'object' && !Array.isArray(value) && indent.length > 2 ? 320 : 160;
  if (value === null || typeof value !== 'object' || flat.length + indent.length <= width)
    return indent === '' ? `${flat}\n` : flat;
  const inner = `${indent}  `;
  const items = Array.isArray(value)
    ? value.map((item) => `${inner}${compactJson(item, inner)}`)
    : Object.entries(value).map(([key, item]) => `${inner}${JSON.stringify(key)}: ${compactJson(item, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return `${open}\n${items.join(',\n')}\n${indent}${close}${indent === '' ? '\n' : ''}`;
}
