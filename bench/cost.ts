/**
 * What one operation costs the processes behind it, measured around a run: CPU time of each
 * process (from /proc), the MongoDB commands the service's processes sent (their
 * `pos_mongo_commands_total` on /metrics) and the Redis commands Redis ran (INFO commandstats).
 * Every scenario and ceiling of the benchmark wraps its measured run in a probe (`runLoad` takes
 * one), so each gets the same figures.
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
  /** Awaited before the stop's readings: work the run caused after its answers (e.g. webhook deliveries) counts in its cost. */
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

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU of a process (all its threads, live and ended), ms; undefined when gone. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: fields count from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
  } catch {
    return undefined;
  }
}

interface CommandStats {
  calls: Map<string, number>;
  usec: number;
}

/** The commands Redis ran so far: on a cluster, summed over its masters. */
async function commandStats(redis: RedisClient): Promise<CommandStats> {
  const texts = await Promise.all((isCluster(redis) ? redis.nodes('master') : [redis]).map((node) => node.info('commandstats')));
  const calls = new Map<string, number>();
  let usec = 0;
  for (const text of texts) {
    for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      const name = match[1]!;
      // the probe's own INFO is not the operation's
      if (name === 'info') continue;
      calls.set(name, (calls.get(name) ?? 0) + Number(match[2]));
      usec += Number(match[3]);
    }
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


interface Snapshot {
  cpu: Map<string, number | undefined>;
  redis: CommandStats;
  mongo: Map<string, number>;
}

/**
 * Takes a snapshot at `start` and the difference at `stop`. The /metrics scrapes come before the
 * start's other readings and after the stop's, so that they are not counted in the run.
 */
export class CostProbe {
  private before: Snapshot | undefined;

  constructor(private readonly targets: ProbeTargets) {}

  async start(): Promise<void> {
    const mongo = await mongoCommands(this.targets.mongoCounters ?? []);
    const redis = await commandStats(this.targets.redis);
    this.before = { mongo, redis, cpu: this.cpu() };
  }

  async stop(ops: number): Promise<Cost> {
    await this.targets.settled?.();
    const cpu = this.cpu();
    const redis = await commandStats(this.targets.redis);
    const mongo = await mongoCommands(this.targets.mongoCounters ?? []);
    const before = this.before!;
    const per = (value: number, digits = 3) => (ops > 0 ? round(value / ops, digits) : 0);
    const cpuMs: Record<string, number> = {};
    for (const [role, ms] of cpu) {
      const was = before.cpu.get(role);
      if (ms !== undefined && was !== undefined) cpuMs[role] = per(ms - was);
    }
    const mongoCommandsPer: Record<string, number> = {};
    for (const [role, count] of mongo) mongoCommandsPer[role] = per(count - (before.mongo.get(role) ?? 0), 2);
    const redisByCommand: Record<string, number> = {};
    let redisCommands = 0;
    for (const [name, calls] of redis.calls) {
      const delta = calls - (before.redis.calls.get(name) ?? 0);
      if (delta <= 0) continue;
      redisCommands += delta;
      redisByCommand[name] = per(delta, 2);
    }
    return {
      ops,
      cpuMs,
      mongoCommands: mongoCommandsPer,
      redisCommands: per(redisCommands, 2),
      redisByCommand,
      redisUsec: per(redis.usec - before.redis.usec, 1),
    };
  }

  private cpu(): Map<string, number | undefined> {
    return new Map(this.targets.processes.map(({ role, pid }) => [role, processCpuMs(pid)]));
  }
}

/** The sum of the CPU figures of the named processes (those measured), ms per operation. */
export function cpuOf(cost: Cost | undefined, roles: (role: string) => boolean): number {
  if (!cost) return 0;
  return round(
    Object.entries(cost.cpuMs)
      .filter(([role]) => roles(role))
      .reduce((sum, [, ms]) => sum + ms, 0),
    3,
  );
}
