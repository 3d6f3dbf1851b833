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
  const tokenNote = service.generatedToken ? ` (admin token: ${service.generatedToken})` : '';
  const operatorNote = service.adminPort === undefined ? '' : `; operators at ${service.operatorOrigin}`;
  process.stdout.write(`POS ordering service ready at ${service.baseUrl}${operatorNote}${tokenNote}\n`);
});
