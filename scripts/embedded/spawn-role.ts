/**
 * Starts a TypeScript entry of this repository as a child Node process (`node --require tsx/cjs`)
 * and waits for its ready log line: the service's roles for the tests and the benchmark, and the
 * benchmark's bare ceiling servers.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { signalGroup, spawnGroup } from './process-group';

/** The repository root. */
export const ROOT = path.resolve(__dirname, '../..');

export type Role = 'api' | 'worker';

/** A role's process entry, relative to ROOT. */
export function roleEntry(role: Role): string {
  return path.join('services', role, 'src', 'main.ts');
}

/** The ready line of each role (pino puts `msg` last); the API's first group is its port. */
export const ROLE_READY: Record<Role, RegExp> = {
  api: /"port":(\d+)[^\n]*"msg":"api listening"/,
  worker: /"msg":"worker ready"/,
};

export interface SpawnNodeOptions {
  /** For error messages. */
  name: string;
  /** Relative to `root`. */
  entry: string;
  /** The checkout it runs from (its sources and node_modules); default ROOT, this one. */
  root?: string;
  /** Added to this process's environment. */
  env: Record<string, string>;
  /** Matched against everything the child has written so far. */
  ready: RegExp;
  /**
   * Where stdout and stderr go: appended to this file (this process never reads a pipe), or,
   * when absent, piped and kept in memory.
   */
  logFile?: string;
  /** Node options before the entry. */
  nodeArgs?: string[];
  /** How long to wait for the ready line; default 30 s. */
  timeoutMs?: number;
  /** Called as soon as the child exists, before it is ready. */
  onSpawn?(child: ChildProcess): void;
  /**
   * The child is meant to die (a fault injected into it) and may do so before its ready line:
   * its exit then ends the wait as the line would, with `ready` an empty match.
   */
  mayDieFirst?: boolean;
}

export interface NodeChild {
  process: ChildProcess;
  /** The first match of the ready pattern (empty when a `mayDieFirst` child died first). */
  ready: RegExpMatchArray;
  /** Everything the child has written (when it appends to a log file, what it added there). */
  output(): string;
  /** The exit code; on 'close', so the child's output has all been read by then. */
  exited: Promise<number | null>;
}

/** Spawns the entry and resolves once its output matches `ready`; kills it if it never does. */
export async function spawnNode(options: SpawnNodeOptions): Promise<NodeChild> {
  const { name, logFile, ready, timeoutMs = 30_000 } = options;
  const fd = logFile === undefined ? undefined : fs.openSync(logFile, 'a');
  // An earlier process's lines in the same file are not this one's (its ready line least of all).
  const offset = fd === undefined ? 0 : fs.fstatSync(fd).size;
  // A group of its own, ended with this process: nothing of a run outlives it (process-group.ts).
  const root = options.root ?? ROOT;
  const child = spawnGroup(
    process.execPath,
    ['--require', 'tsx/cjs', ...(options.nodeArgs ?? []), path.join(root, options.entry)],
    {
      cwd: root,
      env: { ...process.env, ...options.env },
      stdio: fd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
      diesWithParent: true,
    },
  );
  if (fd !== undefined) fs.closeSync(fd);
  options.onSpawn?.(child);

  let captured = '';
  if (logFile === undefined) {
    child.stdout!.on('data', (c: Buffer) => (captured += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (captured += c.toString()));
  }
  const output =
    logFile === undefined ? () => captured : () => fs.readFileSync(logFile).subarray(offset).toString('utf8');
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const failure = (why: string) =>
    new Error(`${name} ${why}${logFile ? `; see ${logFile}` : ''}:\n${output().slice(-4000)}`);

  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poller);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      outcome();
    };
    const check = () => {
      const found = output().match(ready);
      if (found) finish(() => resolve(found));
    };
    const timer = setTimeout(() => finish(() => reject(failure(`did not start within ${timeoutMs} ms`))), timeoutMs);
    // A log file has no events to wait on: look at it every 100 ms.
    const poller = logFile === undefined ? undefined : setInterval(check, 100);
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    void exited.then((code) =>
      finish(() =>
        options.mayDieFirst ? resolve(''.match(/^/)!) : reject(failure(`exited (${code}) before it was ready`)),
      ),
    );
  }).catch(async (err: Error) => {
    if (child.exitCode === null && child.signalCode === null) {
      signalGroup(child, 'SIGKILL');
      await exited;
    }
    throw err;
  });

  return { process: child, ready: match, output, exited };
}
