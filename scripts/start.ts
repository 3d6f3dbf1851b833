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
  const children: ChildServer[] = [];
  if (!config.redisUrl) {
    const redis = await startRedisServer();
    children.push(redis);
    config.redisUrl = redis.url;
    log.info({ redisUrl: redis.url }, 'started embedded redis-server');
  }
  if (!config.mongoUrl) {
    const mongo = await startJongodb();
    children.push(mongo);
    config.mongoUrl = mongo.url;
    log.warn({ mongoUrl: mongo.url }, 'no MONGO_URL: using the in-memory MongoDB stand-in; data is not kept');
  }
  const generatedToken = config.adminToken ? undefined : generateAdminToken();
  config.adminToken ??= generatedToken;

  const worker = await startWorker(config, log.child({ role: 'worker' }));
  const api = await startApi(config, log.child({ role: 'api' }));

  onShutdown(log, config.shutdownGraceMs, async () => {
    await api.close();
    await worker.close();
    for (const child of children.reverse()) await child.stop();
  });

  const tokenNote = generatedToken ? ` (admin token: ${generatedToken})` : '';
  process.stdout.write(`POS ordering service ready at http://localhost:${api.port}${config.basePath}${tokenNote}\n`);
});
