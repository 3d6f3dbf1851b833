/**
 * The CPU each Redis process spends during a measured run, from /proc/<pid>/stat (user + system
 * time): a share of one core over the run's wall time, so that one can see where the load went.
 */
import { execSync } from 'node:child_process';
import fs from 'node:fs';

export interface RedisProcess {
  /** `redis` for one Redis; `master 1`, `replica 1` ... on a cluster. */
  name: string;
  pid: number;
}

export interface CpuShare {
  name: string;
  /** Percent of one core over the run. */
  percent: number;
}

let ticksPerSecond: number | undefined;

function cpuTicks(pid: number): number | undefined {
  try {
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  } catch {
    return undefined;
  }
}

/** Starts measuring now; `stop()` gives each process's share since. Empty without /proc or processes. */
export function measureCpu(processes: RedisProcess[]): { stop(): CpuShare[] } {
  ticksPerSecond ??= Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
  const hz = ticksPerSecond;
  const start = performance.now();
  const before = processes.map((p) => cpuTicks(p.pid));
  return {
    stop() {
      const seconds = (performance.now() - start) / 1000;
      return processes.flatMap((p, i) => {
        const [from, to] = [before[i], cpuTicks(p.pid)];
        if (from === undefined || to === undefined || seconds <= 0) return [];
        return [{ name: p.name, percent: Math.round(((to - from) / hz / seconds) * 1000) / 10 }];
      });
    },
  };
}

export const formatCpu = (shares: CpuShare[] | undefined): string =>
  shares && shares.length > 0 ? shares.map((s) => `${s.name} ${s.percent} %`).join(', ') : 'n/a';
