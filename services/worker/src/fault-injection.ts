/**
 * Test-only crash points (FAULT_INJECT=crash-<point>): the worker kills itself with SIGKILL at the
 * named point, as a crash there would, so that tests can prove what survives one. Every other
 * point, and every point when FAULT_INJECT is empty, does nothing.
 */
import type { Logger } from '@pos/shared/log';

/**
 * Around the MongoDB write and the answer of a job, between the archive copy and the hot delete,
 * and between an order deadline job's overdue mark, or the presence sweep's change, and its announcement.
 */
export type CrashPoint =
  'before-apply' | 'after-apply' | 'after-answer' | 'mid-archive' | 'after-overdue-mark' | 'after-location-change';

export type Checkpoint = (point: CrashPoint) => void;

/** The checkpoint of a worker configured with FAULT_INJECT = `fault` (empty: none). */
export function faultInjection(fault: string, log: Logger): Checkpoint {
  return (point) => {
    if (fault !== `crash-${point}`) return;
    // Best effort: pino writes asynchronously, and SIGKILL may beat this line to the pipe.
    log.warn({ point }, 'FAULT_INJECT: killing this worker');
    process.kill(process.pid, 'SIGKILL');
  };
}
