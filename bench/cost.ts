/**
 * What one operation costs the processes behind it, measured around a run: each process's CPU
 * (from /proc), the MongoDB commands the service's processes sent (`pos_mongo_commands_total`)
 * and the Redis commands Redis ran (INFO commandstats). Every run is wrapped in such a probe.
 */
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import { isCluster, RedisClient } from '@pos/shared/redis';
import { REQUEST_TIMEOUT_MS } from '@pos/shared/clients/json-http';
import { round } from './statistics';

/** A process whose CPU time is read from /proc, under the name the report gives it. */
export interface WatchedProcess {
  role: string;
  pid: number;
}

/** A process of the service that counts its MongoDB commands on /metrics. */
export interface MongoCounter {
  role: string;
  metricsUrl: string;
  /** What the scrape sends: an API node's /metrics needs its admin token. */
  headers?: Record<string, string>;
}

export interface ProbeTargets {
  processes: WatchedProcess[];
  mongoCounters?: MongoCounter[];
  /** A connection to the Redis every process uses, for INFO commandstats (on a cluster, every master's). */
  redis: RedisClient;
  /**
   * Awaited before the stop's readings: work the run caused after its
   * answers (e.g. webhook deliveries) counts in its cost.
   */
  settled?: () => Promise<void>;
}

export interface Cost {
  /** Operations the figures are divided by (successful and failed). */
  ops: number;
  /** CPU time per operation (user + system), ms, by process. */
  cpuMs: Record<string, number>;
  /** MongoDB commands per operation, by service process. */
  mongoCommands: Record<string, number>;
  /** Redis commands per operation, all clients together (commands run by scripts included). */
  redisCommands: number;
  /** Of those, per operation by command name (`evalsha` are BullMQ's scripts). */
  redisByCommand: Record<string, number>;
  /** Microseconds Redis spent executing them, per operation (its own account). */
  redisUsec: number;
}

const TICKS = (() => {
  try {
    return Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU of a process (all its threads, live and ended), ms; undefined when gone. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: fields count from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
  } catch {
    return undefined;
  }
}

/** The commands Redis ran so far, by name, and their time: on a cluster, summed over its masters. */
async function commandStats(redis: RedisClient): Promise<{ calls: Map<string, number>; usec: number }> {
  const texts = await Promise.all(
    (isCluster(redis) ? redis.nodes('master') : [redis]).map((node) => node.info('commandstats')),
  );
  const calls = new Map<string, number>();
  let usec = 0;
  for (const match of texts.join('\n').matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    // the probe's own INFO is not the operation's
    if (match[1] === 'info') continue;
    calls.set(match[1]!, (calls.get(match[1]!) ?? 0) + Number(match[2]));
    usec += Number(match[3]);
  }
  return { calls, usec };
}

async function mongoCommands(counters: MongoCounter[]): Promise<Map<string, number>> {
  const counts = await Promise.all(
    counters.map(async ({ role, metricsUrl, headers }) => {
      const text = await (await fetch(metricsUrl, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })).text();
      const match = /^pos_mongo_commands_total (\d+(?:\.\d+)?)/m.exec(text);
      return [role, match ? Number(match[1]) : NaN] as const;
    }),
  );
  return new Map(counts);
}

/**
 * A snapshot at `start`, the difference at `stop`; the /metrics scrapes fall outside the measured
 * readings. Between them, `pause` and `resume` leave a span out of the CPU and Redis figures (a run
 * measured in slices, alternating with another's: see runAlternating). MongoDB commands are counted
 * by each service process for itself, from `start` to `stop`, so that its /metrics are not scraped
 * per slice: a worker's few background reads between its slices count too.
 */
export class CostProbe {
  private mongoBefore = new Map<string, number>();
  /** CPU ms by process and Redis's commands and time, summed over the measured spans. */
  private cpu = new Map<string, number | undefined>();
  private redis = { calls: new Map<string, number>(), usec: 0 };
  /** The readings at the start of the span being measured, if one is. */
  private span: { cpu: Map<string, number | undefined>; redis: Awaited<ReturnType<typeof commandStats>> } | undefined;

  constructor(private readonly targets: ProbeTargets) {}

  async start(): Promise<void> {
    this.mongoBefore = await mongoCommands(this.targets.mongoCounters ?? []);
    this.cpu = new Map(this.targets.processes.map(({ role }) => [role, 0]));
    this.redis = { calls: new Map(), usec: 0 };
    await this.resume();
  }

  /** Begins a measured span (`start` begins the first). */
  async resume(): Promise<void> {
    const redis = await commandStats(this.targets.redis);
    this.span = { redis, cpu: this.readCpu() };
  }

  /** Ends the measured span: what follows until `resume` is not counted. */
  async pause(): Promise<void> {
    const cpu = this.readCpu();
    const redis = await commandStats(this.targets.redis);
    const span = this.span!;
    this.span = undefined;
    for (const [role, ms] of cpu) {
      const [from, sum] = [span.cpu.get(role), this.cpu.get(role)];
      // a process not read at both ends of a span has no figure
      this.cpu.set(role, ms === undefined || from === undefined || sum === undefined ? undefined : sum + ms - from);
    }
    for (const [name, n] of redis.calls)
      this.redis.calls.set(name, (this.redis.calls.get(name) ?? 0) + n - (span.redis.calls.get(name) ?? 0));
    this.redis.usec += redis.usec - span.redis.usec;
  }

  async stop(ops: number): Promise<Cost> {
    if (this.targets.settled) {
      // the settling counts, after the last span too
      if (!this.span) await this.resume();
      await this.targets.settled();
    }
    if (this.span) await this.pause();
    const mongo = await mongoCommands(this.targets.mongoCounters ?? []);
    const per = (value: number, digits = 3) => (ops > 0 ? round(value / ops, digits) : 0);
    const cpuMs = Object.fromEntries(
      [...this.cpu].flatMap(([role, ms]) => (ms === undefined ? [] : [[role, per(ms)]])),
    );
    const mongoPer = Object.fromEntries(
      [...mongo].map(([role, count]) => [role, per(count - (this.mongoBefore.get(role) ?? 0), 2)]),
    );
    const calls = [...this.redis.calls].filter(([, n]) => n > 0);
    const redisCommands = per(
      calls.reduce((sum, [, n]) => sum + n, 0),
      2,
    );
    return {
      ops,
      cpuMs,
      mongoCommands: mongoPer,
      redisCommands,
      redisByCommand: Object.fromEntries(calls.map(([name, n]) => [name, per(n, 2)])),
      redisUsec: per(this.redis.usec, 1),
    };
  }

  private readCpu(): Map<string, number | undefined> {
    return new Map(this.targets.processes.map(({ role, pid }) => [role, processCpuMs(pid)]));
  }
}

/** The sum of the CPU figures of the named processes (those measured), ms per operation. */
export const cpuOf = (cost: Cost | undefined, roles: (role: string) => boolean): number =>
  round(
    Object.entries(cost?.cpuMs ?? {}).reduce((sum, [role, ms]) => sum + (roles(role) ? ms : 0), 0),
    3,
  );

export interface CpuShare {
  name: string;
  /** Percent of one core over the run. */
  percent: number;
}

/** Starts measuring now; `stop()` gives each process's share of one core since. Empty without /proc or processes. */
export function measureCpu(processes: WatchedProcess[]): { stop(): CpuShare[] } {
  const start = performance.now();
  const before = processes.map((p) => processCpuMs(p.pid));
  return {
    stop() {
      const seconds = (performance.now() - start) / 1000;
      return processes.flatMap((p, i) => {
        const [from, to] = [before[i], processCpuMs(p.pid)];
        if (from === undefined || to === undefined || seconds <= 0) return [];
        return [{ name: p.role, percent: Math.round((to - from) / seconds) / 10 }];
      });
    },
  };
}

export const formatCpu = (shares: CpuShare[] | undefined): string =>
  shares && shares.length > 0 ? shares.map((s) => `${s.name} ${s.percent} %`).join(', ') : 'n/a';
