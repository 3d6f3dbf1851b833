/**
 * A process's shutdown as an ordered list of named steps within one budget: each step waits at
 * most its own time and what is left of the budget; one that does not finish in time (a MongoDB
 * hung under a job, a Redis that does not answer) is forced, when it can be, and left behind. So
 * a role always stops within its grace period, and its jobs and requests are handed back rather
 * than waited for past it (docs/operating.md#stopping-a-role).
 */
import type { Logger } from '../log';
import { withTimeout } from '../util/timeout';

export interface Stopper {
  name: string;
  /** The most this step may take; absent: whatever is left of the budget. */
  withinMs?: number;
  stop(): Promise<unknown>;
  /** What ends the step at once when it did not finish in time (sockets closed, connections dropped). */
  force?(): unknown;
}

/** How long a step's force may take: it closes sockets, it does not wait on a peer. */
const FORCE_MS = 250;

/** Runs the steps in order within `budgetMs`; resolves by then (and a force's few ms) whatever they do. */
export async function stopInOrder(steps: readonly Stopper[], budgetMs: number, log: Logger): Promise<void> {
  const endsAt = Date.now() + budgetMs;
  for (const step of steps) {
    const left = Math.max(0, endsAt - Date.now());
    const ms = Math.min(step.withinMs ?? left, left);
    try {
      await withTimeout(
        Promise.resolve().then(() => step.stop()),
        ms,
        step.name,
      );
      continue;
    } catch (err) {
      log.warn(
        { err: (err as Error).message, step: step.name },
        `${step.name}: gave up waiting${step.force ? '; forced' : ''}`,
      );
    }
    if (step.force) {
      try {
        await withTimeout(
          Promise.resolve().then(() => step.force!()),
          FORCE_MS,
          `${step.name} (forced)`,
        );
      } catch (err) {
        log.warn({ err: (err as Error).message, step: step.name }, `${step.name}: forcing it failed`);
      }
    }
  }
}
