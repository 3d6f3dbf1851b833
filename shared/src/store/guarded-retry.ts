/**
 * The guarded read, decide, write loop, written once. Each attempt reads a document, decides, and
 * writes conditional on the version (or revision) it read; an attempt whose write found the
 * document changed returns RACED, and the loop pauses (raceBackoff) and tries again. Past
 * VERSION_RACE_RETRIES lost races it gives up one way, whoever calls it: a 409 `Concurrent
 * modification` (RacesLost, a ProblemError), which the API answers as it is and a worker returns
 * as its outcome.
 */
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProblemError, problems } from '../domain/problem';
import { doubling } from '../util/doubling-pause';

/** A write that lost its version race re-reads and re-decides this many times before a 409. */
export const VERSION_RACE_RETRIES = 12;

/** What an attempt returns when its guarded write found the document changed since it was read. */
export const RACED = Symbol('raced');

/**
 * The pause before re-reading after a lost race: random, so that writers who lost to the same
 * winner do not all read and collide again; up to 2, 4, 8 ... 32 ms.
 */
export function raceBackoff(attempt: number): Promise<void> {
  return sleep(randomInt(doubling(attempt, [2, 32])));
}

/** The 409 of a write that lost VERSION_RACE_RETRIES races in a row. */
export class RacesLost extends ProblemError {
  constructor() {
    super(problems.concurrentModification());
  }
}

/** Runs `attempt` (numbered from 1) until it returns anything but RACED; RacesLost past VERSION_RACE_RETRIES. */
export async function guardedRetry<T>(attempt: (n: number) => Promise<T | typeof RACED>): Promise<T> {
  for (let n = 1; n <= VERSION_RACE_RETRIES; n++) {
    const result = await attempt(n);
    if (result !== RACED) return result as T;
    if (n < VERSION_RACE_RETRIES) await raceBackoff(n);
  }
  throw new RacesLost();
}
