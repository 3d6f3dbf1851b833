/**
 * The raw ceilings the service is built on, measured in the same run and at the same
 * concurrency as the service: a bare Koa JSON route, a bare BullMQ add-and-wait round trip
 * (the API's own JobClient and reply channel, a worker that only answers) and Redis itself.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { orderActionJob, replyChannel } from '@pos/shared/queue/jobs';
import { TransitionQueues } from '@pos/shared/queue/transition-queue';
import { createRedis, publish, RedisClient, RedisTarget } from '@pos/shared/redis';
import { JobClient } from '@pos/api/jobs/job-client';
import { ChannelSubscriber } from '@pos/api/pubsub/channel-subscriber';
import { singleRedisNodes } from '@pos/api/pubsub/subscriber-nodes';
import type { Backends } from './deployment';
import { probeOf } from './deployment';
import { httpCall, keepAliveTarget, LoadBounds, LoadResult, runLoad, summarise } from './load';
import { spawnNode } from './processes';

export interface Ceilings {
  /** Bare Koa, `GET /orders/location?n=0` (an empty array), by concurrency. */
  koa: LoadResult[];
  /** Bare Koa serving N order records, at the poll concurrency, by record count. */
  koaPayload: (LoadResult & { records: number })[];
  /** BullMQ add, worker, reply on pub/sub, by concurrency. */
  bullmq: LoadResult[];
  /** Redis SET round trips on one connection, by concurrency. */
  redis: LoadResult[];
  /** One Redis pub/sub hop, publish to receipt, one message at a time. */
  pubsubHop: LoadResult;
}

export async function measureCeilings(
  backends: Backends,
  options: { concurrencies: number[]; pollConcurrency: number; pollRecords: number[]; bounds: LoadBounds; say(line: string): void },
): Promise<Ceilings> {
  const { concurrencies, bounds, say } = options;
  const koa: LoadResult[] = [];
  const koaPayload: (LoadResult & { records: number })[] = [];
  const koaChild = await spawnNode('ceiling-koa', 'bench/bare/koa-json.ts', {}, /"port":(\d+)/, backends.logDir);
  try {
    const origin = `http://127.0.0.1:${koaChild.ready[1]}`;
    const probe = probeOf(backends, [{ role: 'koa', pid: koaChild.process.pid! }]);
    for (const c of concurrencies) {
      const target = keepAliveTarget(origin, c);
      koa.push(await runLoad(c, () => httpCall(target, 'GET', '/orders/location?n=0').then(() => undefined), bounds, probe));
      target.agent.destroy();
      say(`ceiling koa c=${c}: ${koa.at(-1)!.rps} rps`);
    }
    for (const records of options.pollRecords) {
      const c = options.pollConcurrency;
      const target = keepAliveTarget(origin, c);
      const result = await runLoad(c, () => httpCall(target, 'GET', `/orders/location?n=${records}`).then(() => undefined), bounds, probe);
      koaPayload.push({ ...result, records });
      target.agent.destroy();
      say(`ceiling koa ${records} records c=${c}: ${result.rps} rps`);
    }
  } finally {
    await koaChild.stop();
  }

  const prefix = `bench_ceiling_${randomBytes(3).toString('hex')}`;
  const bullmq: LoadResult[] = [];
  const echo = await spawnNode('ceiling-echo-worker', 'bench/bare/echo-worker.ts', { REDIS_URL: backends.redisUrl, REDIS_PREFIX: prefix }, /echo worker ready/, backends.logDir);
  const target: RedisTarget = { url: backends.redisUrl, cluster: false };
  const redis = createRedis(target, { maxRetriesPerRequest: 2 });
  const subscriber = new ChannelSubscriber(singleRedisNodes(target), createLogger('silent', 'bench'));
  const queues = new TransitionQueues(redis, { redisPrefix: prefix, cluster: false, partitions: 1 }, createLogger('warn', 'bench'), loadConfig({}).queue.jobKeepFailed);
  const queue = queues.current[0]!.queue;
  // The ceiling measures the queue round trip alone: an admission that never refuses.
  const admitAll = { acquire: () => ({ partition: 0, id: 0 }), settled: () => undefined, retryAfterSeconds: () => 1 };
  const jobs = new JobClient(queues, admitAll, subscriber, replyChannel(prefix, 'bench'), 10_000, createLogger('warn', 'bench'));
  try {
    await jobs.start();
    for (const c of concurrencies) {
      const result = await runLoad(
        c,
        async (client, iteration) => {
          const outcome = await jobs.run(
            orderActionJob({ locationId: 'bench' }, client + 1, { kind: 'failure', reason: `i${iteration}` }),
            { requestId: 'bench' },
          );
          if (outcome.status !== 200) throw new Error(`job answered ${outcome.status}`);
        },
        bounds,
        // The producer side runs in this process (the load loop around it costs next to nothing).
        probeOf(backends, [
          { role: 'producer', pid: process.pid },
          { role: 'echo-worker', pid: echo.process.pid! },
        ]),
      );
      bullmq.push(result);
      say(`ceiling bullmq c=${c}: ${result.rps} rps`);
    }
  } finally {
    await jobs.stop();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await echo.stop();
  }

  const redisResults: LoadResult[] = [];
  const value = 'x'.repeat(200);
  try {
    for (const c of concurrencies) {
      const result = await runLoad(c, async (client) => void (await redis.set(`${prefix}:k${client}`, value)), bounds, probeOf(backends, []));
      redisResults.push(result);
      say(`ceiling redis c=${c}: ${result.rps} ops/s`);
    }
    const pubsubHop = await measurePubsubHop(redis, subscriber, `${prefix}:hop`, 300);
    say(`ceiling pub/sub hop: p50 ${pubsubHop.p50Ms} ms`);
    await redis.del(...concurrencies.flatMap((c) => Array.from({ length: c }, (_, i) => `${prefix}:k${i}`)));
    return { koa, koaPayload, bullmq, redis: redisResults, pubsubHop };
  } finally {
    await Promise.all([redis.quit(), subscriber.quit()].map((p) => p.catch(() => undefined)));
  }
}

/** Publishes `count` messages one after another and times each from PUBLISH to receipt. */
async function measurePubsubHop(redis: RedisClient, subscriber: ChannelSubscriber, channel: string, count: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let sentAt = 0;
  let received: (() => void) | undefined;
  const handler = () => {
    latencies.push(performance.now() - sentAt);
    received?.();
  };
  await subscriber.subscribe(channel, handler);
  const start = performance.now();
  for (let i = 0; i < count; i += 1) {
    const arrived = new Promise<void>((resolve) => (received = resolve));
    sentAt = performance.now();
    await publish(redis, channel, `{"i":${i}}`);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([arrived, new Promise<void>((resolve) => (timer = setTimeout(resolve, 5_000)))]);
    clearTimeout(timer);
  }
  await subscriber.unsubscribe(channel, handler);
  const seconds = (performance.now() - start) / 1000;
  return summarise(1, latencies, count - latencies.length, seconds);
}
