import { loadConfig } from '../../../shared/src/config';
import { createLogger } from '../../../shared/src/log';
import { onShutdown, runMain } from '../../../shared/src/process/lifecycle';
import { startApi } from './server';

const config = loadConfig();
const log = createLogger(config.logLevel, 'pos-api');

runMain(log, async () => {
  // The handler goes in first: a SIGTERM during start-up still shuts down cleanly.
  const starting = startApi(config, log);
  onShutdown(log, config.shutdownGraceMs, async () => (await starting).close());
  await starting;
});
