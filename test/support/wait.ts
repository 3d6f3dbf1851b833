/**
 * Waiting in tests: on something observable of the system under test (`eventually`), never for a
 * fixed time. `pause` is for the few places where the time itself is what is tested (an idle
 * period, an outage lasting long enough, a client's retry delay, a load's pace); each says so.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** How long `eventually` waits unless told: only a hang should reach it. */
export const EVENTUALLY_MS = 10_000;

/**
 * Polls `condition` until it holds, or fails naming what was awaited (and, when `detail` is
 * given, what was seen instead).
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = EVENTUALLY_MS,
  detail?: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail ? `; ${detail()}` : ''}`);
    await sleep(20);
  }
}

/** Lets `ms` pass: only where the passing time is the thing under test (say why at the call). */
export function pause(ms: number): Promise<void> {
  return sleep(ms);
}
