/**
 * What register presence adds to a poll (docs/presence-and-deadlines.md#cost): one register
 * polls an in-process API node (with its worker) on a private Redis and MongoDB; the Redis
 * commands the run caused are read from INFO commandstats, the presence writes among them by
 * name, and the CPU of the tracker's per-request work is timed on its own.
 *
 *   npx tsx bench/presence-cost.ts [polls]
 */
import Redis from 'ioredis';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import type { SessionDoc } from '@pos/shared/store/documents';
import { startApi } from '@pos/api/server';
import { PresenceTracker } from '@pos/api/presence/presence-tracker';
import { startWorker } from '@pos/worker/worker';
import { startJongodb } from '../scripts/embedded/jongodb';
import { startRedisServer } from '../scripts/embedded/redis-server';

async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const stats = new Map<string, number>();
  for (const line of (await redis.info('commandstats')).split('\n')) {
    const match = /^cmdstat_([a-z|]+):calls=([0-9]+)/.exec(line.trim());
    if (match) stats.set(match[1]!, Number(match[2]));
  }
  return stats;
}

async function main(): Promise<void> {
  const polls = Number(process.argv[2] ?? 2000);
  const [redisServer, mongoServer] = await Promise.all([startRedisServer(), startJongodb()]);
  const env = {
    REDIS_URL: redisServer.url,
    MONGO_URL: mongoServer.url,
    ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef',
    API_KEY_SECRET: 'bench-key-secret-0123456789abcdef0123',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
  };
  const config = loadConfig(env);
  const log = createLogger('silent', 'bench');
  const worker = await startWorker(config, log);
  const api = await startApi(config, log);
  const origin = `http://127.0.0.1:${api.port}`;
  const admin = new AdminClient(origin, env.ADMIN_TOKEN);
  const redis = new Redis(redisServer.url);
  try {
    const location = await admin.createLocation('bench');
    const { apiKey } = await admin.createServiceSession(location.id, 'register-bench');
    const poll = () => fetch(`${origin}/api/v1/orders/location?state=PLACED`, { headers: { api_key: apiKey } }).then((res) => res.arrayBuffer());
    await poll();
    const before = await commandStats(redis);
    const started = Date.now();
    for (let i = 0; i < polls; i++) await poll();
    const seconds = (Date.now() - started) / 1000;
    const after = await commandStats(redis);
    const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    const total = [...after.keys()].reduce((sum, name) => sum + delta(name), 0);
    const presence = ['hset', 'pexpire', 'zadd'].reduce((sum, name) => sum + delta(name), 0);

    // The tracker's own work per request, timed alone (a sighting within the quarter window).
    const tracker = new PresenceTracker({ redis, prefix: 'bench-cpu', nodeId: 'n', windowMs: 3_600_000, log });
    const session = { _id: 's1', locationId: 'l1', deviceId: 'd', type: 'SERVICE', keyHash: '', createdAt: new Date() } as SessionDoc;
    tracker.sighted(session);
    const n = 1_000_000;
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) tracker.sighted(session);
    const used = process.cpuUsage(cpu);
    tracker.stop();

    process.stdout.write(
      `${JSON.stringify(
        {
          polls,
          pollsPerSecond: Math.round(polls / seconds),
          windowMs: config.presence.windowMs,
          redisCommandsPerPoll: total / polls,
          presenceRedisCommands: presence,
          presenceRedisCommandsPerPoll: presence / polls,
          trackerCpuNsPerPoll: Math.round(((used.user + used.system) * 1000) / n),
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    redis.disconnect();
    await api.close();
    await worker.close();
    await Promise.all([redisServer.stop(), mongoServer.stop()]);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
