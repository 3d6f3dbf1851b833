/**
 * `npx tsx bench/webhook-cost.ts`: what one webhook subscription adds to a status update. The
 * status updates of `measureStatusUpdates` (PUT statusupdate FAILED below the threshold: a real
 * transition each) on one deployment, first with no subscription, then with one endpoint
 * subscribed to `order.failed` (one delivery per update, to a local receiver answering 204),
 * each run measured until every delivery has been answered. Prints CPU per process, Redis and
 * MongoDB commands per update, and the difference. Settings: BENCH_OPS (per run, default 2000),
 * BENCH_CONCURRENCY (default 16). Starts its own Redis and MongoDB stand-in.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRedis } from '@pos/shared/redis';
import { startJongodb } from '../scripts/embedded/jongodb';
import { startRedisServer } from '../scripts/embedded/redis-server';
import { SAMPLE_ROWS } from '../scripts/embedded/sample-rows';
import type { Cost } from './cost';
import { deploy } from './deployment';
import { httpCall, keepAliveTarget } from './load';
import { inBatches } from './service-load';

const OPS = Number(process.env.BENCH_OPS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ORDERS = 64;

async function main(): Promise<void> {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-bench-webhooks-'));
  const redisServer = await startRedisServer();
  const jongodb = await startJongodb();
  const probeRedis = createRedis({ url: redisServer.url, cluster: false });
  let answered = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answered += 1;
      res.writeHead(204).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await new Promise((resolve) => receiver.once('listening', resolve));
  const serverProcesses = [
    { role: 'redis', pid: redisServer.process.pid! },
    { role: 'mongo', pid: jongodb.process.pid! },
  ];
  const deployment = await deploy('webhooks', { mongoUrl: jongodb.url, redisUrl: redisServer.url, redisProcesses: [], logDir, serverProcesses, redis: probeRedis }, {
    env: { WEBHOOK_ALLOW_PRIVATE: '1' },
  });
  try {
    const { admin } = deployment;
    const location = await admin.createLocation('Bench webhooks', 1000);
    const { apiKey } = await admin.createServiceSession(location.id, 'bench-register');
    const orders = await inBatches(ORDERS, 8, async () => (await admin.createOrder(location.id, SAMPLE_ROWS)).number);
    const target = keepAliveTarget(deployment.apis[0]!.origin, CONCURRENCY);
    const body = JSON.stringify({ newState: 'FAILED' });
    const run = async (ops: number, expectDeliveries: boolean): Promise<Cost> => {
      const probe = deployment.probe();
      const before = answered;
      await probe.start();
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, client) => {
          while (next < ops) {
            next += 1;
            const number = orders[(client + CONCURRENCY * next) % ORDERS]!;
            await httpCall(target, 'PUT', `/api/v1/orders/${number}/statusupdate`, { headers: { api_key: apiKey }, body });
          }
        }),
      );
      // The deliveries are part of the cost: wait for the receiver to have answered them all.
      while (expectDeliveries && answered - before < ops) await new Promise((resolve) => setTimeout(resolve, 50));
      return probe.stop(ops);
    };
    await run(500, false); // warm-up
    const without = await run(OPS, false);
    await admin.createWebhook({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['order.failed'] });
    await run(500, true); // warm-up, the subscription cached
    const withOne = await run(OPS, true);
    target.agent.destroy();
    const line = (name: string, cost: Cost) =>
      `${name}: CPU ms/update ${JSON.stringify(cost.cpuMs)}; Redis commands/update ${cost.redisCommands} (${cost.redisUsec} µs); MongoDB commands/update ${JSON.stringify(cost.mongoCommands)}`;
    process.stdout.write(`${line('no subscription', without)}\n${line('one subscription', withOne)}\n`);
    const diff = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.keys(b).map((k) => [k, Math.round(((b[k] ?? 0) - (a[k] ?? 0)) * 1000) / 1000]));
    process.stdout.write(
      `added by one subscription: CPU ms ${JSON.stringify(diff(without.cpuMs, withOne.cpuMs))}; Redis commands ${Math.round((withOne.redisCommands - without.redisCommands) * 100) / 100} ${JSON.stringify(diff(without.redisByCommand, withOne.redisByCommand))}; MongoDB ${JSON.stringify(diff(without.mongoCommands, withOne.mongoCommands))}\n`,
    );
  } finally {
    await deployment.stop();
    receiver.close();
    await probeRedis.quit();
    await jongodb.stop();
    await redisServer.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
