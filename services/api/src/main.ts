import { loadConfig } from '../../../shared/src/config';
import { createLogger } from '../../../shared/src/log';
import { onShutdown, runMain } from '../../../shared/src/process/lifecycle';
import { startApi } from './server';

const config = loadConfig();
const log = createLogger(config.logLevel, 'pos-api');

runMain(log, async () => {
  const api = await startApi(config, log);
  onShutdown(log, config.shutdownGraceMs, () => api.close());
});
