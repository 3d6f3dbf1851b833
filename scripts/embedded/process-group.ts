/**
 * Children started in process groups of their own and ended as groups, so that nothing they start
 * in turn (npm's sh, tsx's node, an example's background job) outlives them. A test run records
 * each group in the file POS_PROCESS_GROUPS names, and its global teardown fails if one is still
 * alive (test/support/global-teardown.ts).
 */
import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import fs from 'node:fs';

/**
 * `setpriv --pdeathsig` (util-linux, on every Debian): the child gets
 * SIGTERM when this process dies, however it dies.
 */
const SETPRIV = '/usr/bin/setpriv';
const hasSetpriv = fs.existsSync(SETPRIV);

export interface GroupOptions extends Omit<SpawnOptions, 'detached'> {
  /** End with this process, even when it is SIGKILLed (an embedded server). */
  diesWithParent?: boolean;
}

/** Spawns `command` as the leader of a process group of its own. */
export function spawnGroup(command: string, args: readonly string[], options: GroupOptions = {}): ChildProcess {
  const { diesWithParent, ...spawnOptions } = options;
  const [file, argv] =
    diesWithParent && hasSetpriv ? [SETPRIV, ['--pdeathsig', 'TERM', '--', command, ...args]] : [command, args];
  const child = spawn(file, argv, { ...spawnOptions, detached: true });
  const log = process.env.POS_PROCESS_GROUPS;
  if (log && child.pid !== undefined) fs.appendFileSync(log, `${child.pid} ${command}\n`);
  return child;
}

/** Signals every process of the child's group (quietly, when it is gone). */
export function signalGroup(child: Pick<ChildProcess, 'pid'>, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is empty
  }
}

/** Whether any process of the group `pgid` is alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
