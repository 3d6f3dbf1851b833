import { loadConfig } from '../../../shared/src/config';
import { createLogger } from '../../../shared/src/log';
import { onShutdown, runMain } from '../../../shared/src/process/lifecycle';
import { startWorker } from './worker';

const config = loadConfig();
const log = createLogger(config.logLevel, 'pos-worker');

runMain(log, async () => {
  const worker = await startWorker(config, log);
  onShutdown(log, config.shutdownGraceMs, () => worker.close());
});
