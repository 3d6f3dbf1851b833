/** Roles run as child processes (`spawnRole`): where they listen, what they logged, ending them. */
import type { ChildRole } from './stack';

/** An API child's origin. */
export const roleOrigin = (role: { port?: number }): string => `http://127.0.0.1:${role.port}`;

/** How many times the role has logged `message` (children log JSON lines at info). */
export const logged = (role: Pick<ChildRole, 'output'>, message: string): number =>
  role.output().split(`"msg":"${message}"`).length - 1;

/**
 * The ids the callers sent (X-Request-Id), by the service's ids of their requests, from the API
 * roles' access lines: the service names requests by ids of its own (its workers' lines too).
 */
export function claimedRequestIds(apis: readonly Pick<ChildRole, 'output'>[]): Map<string, string> {
  const claimed = new Map<string, string>();
  for (const api of apis) {
    for (const line of api.output().split('\n')) {
      if (!line.includes('"claimedRequestId"') || !line.includes('"msg":"request"')) continue;
      const { requestId, claimedRequestId } = JSON.parse(line) as { requestId: string; claimedRequestId: string };
      claimed.set(requestId, claimedRequestId);
    }
  }
  return claimed;
}

/**
 * Ends the roles still running (the undefined of a `beforeAll` that failed half-way are skipped):
 * `stop` (SIGTERM, as a deployment would) or `kill` (SIGKILL, when how they end is not the test).
 */
export async function stopRoles(roles: readonly (ChildRole | undefined)[], how: 'stop' | 'kill'): Promise<void> {
  const running = roles.filter(
    (role): role is ChildRole =>
      role !== undefined && role.process.exitCode === null && role.process.signalCode === null,
  );
  await Promise.all(running.map((role) => (how === 'stop' ? role.stop() : role.kill())));
}
