/**
 * The CPU each Redis process spends during a measured run, from /proc/<pid>/stat (user + system
 * time): a share of one core over the run's wall time, so that one can see where the load went.
 */
import { processCpuMs } from './cost';

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

/** Starts measuring now; `stop()` gives each process's share since. Empty without /proc or processes. */
export function measureCpu(processes: RedisProcess[]): { stop(): CpuShare[] } {
  const start = performance.now();
  const before = processes.map((p) => processCpuMs(p.pid));
  return {
    stop() {
      const seconds = (performance.now() - start) / 1000;
      return processes.flatMap((p, i) => {
        const [from, to] = [before[i], processCpuMs(p.pid)];
        if (from === undefined || to === undefined || seconds <= 0) return [];
        return [{ name: p.name, percent: Math.round((to - from) / seconds) / 10 }];
      });
    },
  };
}

export const formatCpu = (shares: CpuShare[] | undefined): string =>
  shares && shares.length > 0 ? shares.map((s) => `${s.name} ${s.percent} %`).join(', ') : 'n/a';
