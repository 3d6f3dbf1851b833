/**
 * The benchmark's results as written to bench/results/*.json: their shape, shared by the run
 * that measures them, the summary that rates them and the report that prints them.
 */
import type { ArchiveScenario } from './archive-load';
import type { Ceilings } from './ceilings';
import type { FanOutLevel, StreamMemory } from './fan-out';
import type { LoadResult } from './load';
import type { ProfileSummary } from './profile';
import type { StatusUpdateResult } from './service-load';
import type { StreamsLevel, StreamsSummary } from './streams';

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
  statusUpdates: (StatusUpdateResult & { vs: Ratio })[];
  locationPolls: (LoadResult & { records: number; vs: Ratio })[];
  fanOut: (FanOutLevel & { vs: Omit<Ratio, 'ceilingRps' | 'rpsRatio'> })[];
  streamMemory: StreamMemory;
  /** Absent from runs made before the scenario existed. */
  archive?: ArchiveScenario;
  /** The 10,000-stream level on one API node (absent with BENCH_STREAMS=0). */
  streams?: StreamsLevel;
  ceilings: Ceilings;
  /** Absent when the run left the cluster out (BENCH_ONLY). */
  cluster?: ClusterResults;
  /** The headline figures and ratios of the service's own cost. */
  summary?: Summary;
  /** With --profile: where each API and worker process spent its time. */
  profiles?: ProfileSummary[];
  logs: string;
}

/** The same scenarios on a Redis Cluster. */
export interface ClusterResults {
  shape: string;
  partitions: number;
  statusUpdates: StatusUpdateResult[];
  fanOut: FanOutLevel[];
}

export interface Target {
  /** The figure, the ceiling it is compared with, and their ratio (figure / ceiling). */
  value: number;
  ceiling: number;
  ratio: number;
  /** The ratio the target allows (at most). */
  target: number;
  met: boolean;
}

export interface Summary {
  /** API CPU per poll (ms) against bare Koa's CPU per request serving the same records; target 5. */
  pollCpu: (Target & { records: number; clients: number })[];
  /**
   * API + worker CPU per status update (ms) against bare Koa per request plus bare BullMQ
   * add-and-wait per job (producer and worker); target 2.
   */
  statusUpdateCpu: (Target & { clients: number; apiMs: number; workerMs: number; koaMs: number; producerMs: number; echoWorkerMs: number })[];
  /** MongoDB commands per request on the hot paths (API + worker); at most 2 each. */
  mongoRoundTrips: { statusUpdate: number; poll: number; target: number; met: boolean };
  /** Redis commands per request (script-internal commands included), next to the bare queue's per job. */
  redisCommands: { statusUpdate: number; bullmqCeilingPerJob: number; poll: number };
  /** The streams level: RSS per stream (at most 16 KiB) and fan-out against its floor (at most 1.5). */
  streams?: StreamsSummary;
}
