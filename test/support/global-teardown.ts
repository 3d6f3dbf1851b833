import fs from 'node:fs';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { groupAlive, signalGroup } from '../../scripts/embedded/process-group';
import { livingGroups } from './process-groups';

/** How long a group just signalled may take to end before it counts as left behind. */
const GRACE_MS = 10_000;

/**
 * Stops the run's Redis and MongoDB, then fails the run if a process group a test started is still
 * alive (each is killed first, so that the next run finds its ports free).
 */
export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as { __POS_SERVERS__?: ChildServer[] }).__POS_SERVERS__ ?? [];
  for (const server of started.splice(0).reverse()) await server.stop();
  const log = process.env.POS_PROCESS_GROUPS;
  if (!log || !fs.existsSync(log)) return;
  const deadline = Date.now() + GRACE_MS;
  let left = livingGroups(log);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    left = left.filter((group) => groupAlive(group.pgid));
  }
  fs.rmSync(log, { force: true });
  if (left.length === 0) return;
  for (const group of left) signalGroup({ pid: group.pgid }, 'SIGKILL');
  throw new Error(
    `process groups the tests started are still running (now killed):\n${left.map((g) => `${g.pgid} ${g.command}: ${g.processes.join('; ')}`).join('\n')}`,
  );
}
