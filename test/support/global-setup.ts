import { startJongodb } from '../../scripts/embedded/jongodb';
import { startRedisServer } from '../../scripts/embedded/redis-server';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { recordProcessGroups } from './process-groups';

/** One Redis and one MongoDB for the run, unless REDIS_URL / MONGO_URL name real ones. */
export default async function globalSetup(): Promise<void> {
  const started: ChildServer[] = [];
  if (!process.env.TEST_REDIS_URL) {
    if (process.env.REDIS_URL) process.env.TEST_REDIS_URL = process.env.REDIS_URL;
    else {
      const redis = await startRedisServer();
      started.push(redis);
      process.env.TEST_REDIS_URL = redis.url;
    }
  }
  if (!process.env.TEST_MONGO_URL) {
    if (process.env.MONGO_URL) process.env.TEST_MONGO_URL = process.env.MONGO_URL;
    else {
      const mongo = await startJongodb();
      started.push(mongo);
      process.env.TEST_MONGO_URL = mongo.url;
    }
  }
  // Appended: the cluster tests' setup runs this too, in the same process.
  const servers = ((globalThis as { __POS_SERVERS__?: ChildServer[] }).__POS_SERVERS__ ??= []);
  servers.push(...started);
  // what the tests start from here on is recorded, and checked at the end (global-teardown.ts)
  recordProcessGroups();
}
