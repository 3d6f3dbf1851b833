/**
 * Child Node processes of the benchmark (the service's roles and the bare ceiling servers),
 * each writing its log to a file so that logging costs what it costs in production and the
 * benchmark process never drains pipes.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { spawnNode as spawnEntry } from '../scripts/embedded/spawn-role';

export interface BenchChild {
  name: string;
  process: ChildProcess;
  logFile: string;
  /** The first match of the ready pattern. */
  ready: RegExpMatchArray;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `node --require tsx/cjs [nodeArgs] <entry>` and waits until its log matches `ready`. */
export async function spawnNode(
  name: string,
  entry: string,
  env: Record<string, string>,
  ready: RegExp,
  logDir: string,
  nodeArgs: string[] = [],
): Promise<BenchChild> {
  const logFile = path.join(logDir, `${name}.log`);
  const child = await spawnEntry({
    name,
    entry,
    env,
    ready,
    logFile,
    nodeArgs,
    timeoutMs: 60_000,
    onSpawn: (spawned) => {
      running.add(spawned);
      spawned.once('exit', () => running.delete(spawned));
    },
  });
  return {
    name,
    process: child.process,
    logFile,
    ready: child.ready,
    async stop() {
      if (child.process.exitCode !== null || child.process.signalCode !== null) return;
      child.process.kill('SIGTERM');
      const timer = setTimeout(() => child.process.kill('SIGKILL'), 15_000);
      await child.exited;
      clearTimeout(timer);
    },
  };
}
