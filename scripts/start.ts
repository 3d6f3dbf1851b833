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

// One machine trying the service: it listens on loopback only (its admin API included; HOST=0.0.0.0
// to reach it from elsewhere), and a webhook receiver on it is on loopback. A deployment's roles
// (npm run start:api, start:worker) keep the defaults: every interface, public webhook addresses only.
const config = loadConfig({
  ...process.env,
  HOST: process.env.HOST ?? '127.0.0.1',
  WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE ?? '1',
});
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
  // What the README's tour and the admin CLI read, ready to paste into another terminal: the
  // register interface at POS, the operator surfaces at POS_ADMIN (ADMIN_PORT's, when it is set).
  const token = service.generatedToken ? ` ADMIN_TOKEN=${service.generatedToken}` : '';
  // One write: a role's log line cannot come between the two lines.
  process.stdout.write(
    `POS ordering service ready at ${service.origin}${operatorNote}${tokenNote}\n` +
      'For the tour (README.md), in another terminal: export ' +
      `POS=${service.origin} POS_ADMIN=${service.operatorOrigin}${token}\n`,
  );
});
