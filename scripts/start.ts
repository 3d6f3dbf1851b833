/**
 * `npm start`: API and worker in one process on the embedded default. Starts redis-server
 * unless REDIS_URL is set, and the in-memory MongoDB stand-in unless MONGO_URL is set.
 */
import { generateAdminToken } from '../shared/src/auth/keys';
import { loadConfig } from '../shared/src/config';
import { createLogger } from '../shared/src/log';
import { onShutdown, runMain } from '../shared/src/process/lifecycle';
import { startApi } from '../services/api/src/server';
import { startWorker } from '../services/worker/src/worker';
import type { ChildServer } from './embedded/child-server';
import { startJongodb } from './embedded/jongodb';
import { startRedisServer } from './embedded/redis-server';

const config = loadConfig();
const log = createLogger(config.logLevel, 'pos');

runMain(log, async () => {
  // Whatever has started is stopped in reverse order, even on a signal during start-up.
  const stops: Array<() => Promise<void>> = [];
  onShutdown(log, config.shutdownGraceMs, async () => {
    for (const stop of stops.reverse()) await stop();
  });
  const adopt = (child: ChildServer) => {
    stops.push(() => child.stop());
    return child;
  };

  if (!config.redisUrl) {
    const redis = adopt(await startRedisServer());
    config.redisUrl = redis.url;
    log.info({ redisUrl: redis.url }, 'started embedded redis-server');
  }
  if (!config.mongoUrl) {
    const mongo = adopt(await startJongodb());
    config.mongoUrl = mongo.url;
    log.warn({ mongoUrl: mongo.url }, 'no MONGO_URL: using the in-memory MongoDB stand-in; data is not kept');
  }
  const generatedToken = config.adminToken ? undefined : generateAdminToken();
  config.adminToken ??= generatedToken;

  const worker = await startWorker(config, log.child({ role: 'worker' }));
  stops.push(() => worker.close());
  const api = await startApi(config, log.child({ role: 'api' }));
  stops.push(() => api.close());

  const tokenNote = generatedToken ? ` (admin token: ${generatedToken})` : '';
  process.stdout.write(`POS ordering service ready at http://localhost:${api.port}${config.basePath}${tokenNote}\n`);
});
