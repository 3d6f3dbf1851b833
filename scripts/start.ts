/**
 * `npm start`: API and worker in one process on the embedded default (see EmbeddedService).
 * Its log is readable on a terminal and JSON anywhere else (terminal-log.ts).
 */
import './tracing';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { onShutdown, runMain } from '@pos/shared/process/shutdown';
import { tracing } from '@pos/shared/telemetry/tracing';
import { EmbeddedService } from './embedded/embedded-service';
import { terminalLog } from './terminal-log';

const config = loadConfig();
const log = createLogger(config.process.logLevel, 'pos', terminalLog());

runMain(log, async () => {
  const service = new EmbeddedService(config, log);
  onShutdown(log, config.process.shutdownGraceMs, async () => {
    await service.close();
    await tracing()?.shutdown();
  });
  await service.start();
  if (service.closed) return;
  // The origin, not the base path: the admin API, the docs and the board are beside /api/v1.
  const operatorNote = service.adminPort === undefined ? '' : `; operators at ${service.operatorOrigin}`;
  const tokenNote = service.generatedToken ? ` (admin token: ${service.generatedToken})` : '';
  process.stdout.write(`POS ordering service ready at ${service.origin}${operatorNote}${tokenNote}\n`);
  // What the README's tour and the admin CLI read, ready to paste into another terminal.
  const token = service.generatedToken ? ` ADMIN_TOKEN=${service.generatedToken}` : '';
  process.stdout.write(`For the tour (README.md), in another terminal: export POS=${service.operatorOrigin}${token}\n`);
});
