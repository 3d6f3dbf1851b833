import './tracing';
import { loadConfig } from '@pos/shared/config';
import { createLogger, stdoutLog } from '@pos/shared/log';
import { onShutdown, runMain } from '@pos/shared/process/shutdown';
import { tracing } from '@pos/shared/telemetry/tracing';
import { startApi } from './server';

const config = loadConfig();
const log = createLogger(config.process.logLevel, 'pos-api', stdoutLog(config.process.logFlushMs));

runMain(log, async () => {
  // The handler goes in first: a SIGTERM during start-up still shuts down cleanly.
  const starting = startApi(config, log);
  onShutdown(log, config.process.shutdownGraceMs, async () => {
    await (await starting).close();
    await tracing()?.shutdown();
  });
  await starting;
});
