/**
 * Child Node processes of the benchmark (the service's roles and the bare ceiling servers),
 * each writing its log to a file so that logging costs what it costs in production and the
 * benchmark process never drains pipes.
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..');

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
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', ...nodeArgs, path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );

  const deadline = Date.now() + 60_000;
  let match: RegExpMatchArray | null = null;
  while (!match) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not start; see ${logFile}:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    match = fs.readFileSync(logFile, 'utf8').match(ready);
  }

  return {
    name,
    process: child,
    logFile,
    ready: match,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
