import { buildInfo } from '../build-info';
import type { Logger } from '../log';

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits 0; exits 1 if it fails or outlasts `graceMs`.
 */
export function onShutdown(log: Logger, graceMs: number, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      log.error({ graceMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, graceMs + 5_000);
    timer.unref();
    stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/**
 * Entry-point wrapper: its first log line names the release and commit; logs a start-up failure
 * and exits 1 instead of an unhandled rejection.
 */
export function runMain(log: Logger, main: () => Promise<void>): void {
  log.info(buildInfo(), 'starting');
  main().catch((err) => {
    log.fatal({ err }, 'failed to start');
    process.exit(1);
  });
}
