/**
 * The process groups a test run started (scripts/embedded/process-group.ts records each in the file
 * POS_PROCESS_GROUPS names, which the global setup sets), and which of them are alive.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT_DIR = path.resolve(__dirname, '../..');
import { groupAlive, signalGroup, spawnGroup } from '../../scripts/embedded/process-group';

/** Sets the run's record of process groups, once (both projects' setups call it). */
export function recordProcessGroups(): void {
  if (process.env.POS_PROCESS_GROUPS) return;
  const file = path.join(os.tmpdir(), `pos-test-groups-${process.pid}.log`);
  fs.writeFileSync(file, '');
  process.env.POS_PROCESS_GROUPS = file;
}

export interface LivingGroup {
  pgid: number;
  command: string;
  /** Each living process of the group: its pid and command line. */
  processes: string[];
}

/** The recorded groups with a process still alive. */
export function livingGroups(file: string): LivingGroup[] {
  const groups = new Map<number, string>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [pgid, ...command] = line.split(' ');
    if (pgid) groups.set(Number(pgid), command.join(' '));
  }
  return [...groups]
    .filter(([pgid]) => groupAlive(pgid))
    .map(([pgid, command]) => ({ pgid, command, processes: membersOf(pgid) }));
}

interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  command: string;
}

/** The living processes, from /proc (zombies left out: they have ended, and wait for a parent to reap them). */
function processes(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(entry, 'stat');
    // pid (comm) state ppid pgrp ...: the fields after the last ')'
    const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (!fields || fields[0] === 'Z') continue;
    found.push({
      pid: Number(entry),
      ppid: Number(fields[1]),
      pgid: Number(fields[2]),
      command: (readProc(entry, 'cmdline') ?? '').replace(/\0/g, ' ').trim(),
    });
  }
  return found;
}

/** The processes of a group: pid and command line each. */
export function membersOf(pgid: number): string[] {
  return processes()
    .filter((p) => p.pgid === pgid)
    .map((p) => `${p.pid} ${p.command}`);
}

/** Every living process descended from `pid`, whatever group it is in. */
export function descendantsOf(pid: number): { pid: number; command: string }[] {
  const all = processes();
  const found: ProcessInfo[] = [];
  for (let parents = new Set([pid]); parents.size > 0;) {
    const children = all.filter((p) => parents.has(p.ppid));
    found.push(...children);
    parents = new Set(children.map((p) => p.pid));
  }
  return found.map(({ pid: child, command }) => ({ pid: child, command }));
}

/** Whether the process is alive (a zombie is not). */
export function processAlive(pid: number): boolean {
  return processes().some((p) => p.pid === pid);
}

function readProc(pid: string, file: string): string | undefined {
  try {
    return fs.readFileSync(path.join('/proc', pid, file), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Runs a command to its end in a group of its own, with what it printed; past `timeoutMs` its
 * group is killed (code null). For a CLI a test calls.
 */
export function runToEnd(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawnGroup(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), options.timeoutMs ?? 30_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      // whatever it left running in its group ends with it
      signalGroup(child, 'SIGKILL');
      resolve({ code, out, err });
    });
  });
}

/** `npm start` (or its entry) on the embedded default, in a process group of its own. */
export function startEmbedded(command: string, args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'warn' };
  for (const name of ['MONGO_URL', 'REDIS_URL', 'ADMIN_TOKEN', 'API_KEY_SECRET', 'MONGO_DB', 'REDIS_PREFIX'])
    delete env[name];
  const child = spawnGroup(command, args, { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, output: () => output, exited };
}
