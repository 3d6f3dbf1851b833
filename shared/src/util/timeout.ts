import type { Logger } from '../log';

/** `promise`, or a rejection naming `what` once `ms` have passed; the timer never outlives it. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/**
 * Waits for a shutdown step at most `ms`; past that, or when it fails, it logs and goes on,
 * so that a dead Redis or MongoDB cannot keep a process from stopping.
 */
export async function settleWithin(step: Promise<unknown>, ms: number, log: Logger, what: string): Promise<void> {
  try {
    await withTimeout(step, ms, what);
  } catch (err) {
    log.warn({ err: (err as Error).message }, `${what}: gave up waiting`);
  }
}
