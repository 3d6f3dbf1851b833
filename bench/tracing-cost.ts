/**
 * `npx tsx bench/tracing-cost.ts`: what tracing costs a status update. The status-update scenario
 * of the benchmark (16 clients) runs with tracing off and with it on (every trace kept, sent over
 * OTLP/HTTP to a receiver in this process that only counts what it gets), alternately, `ROUNDS`
 * times each; the API's and the worker's CPU time per update, and the latencies, are printed.
 * `BENCH_TRACING=off` runs only the off case (run it on the code before tracing to compare).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRedis } from '@pos/shared/redis';
import { startJongodb } from '../scripts/embedded/jongodb';
import { startRedisServer } from '../scripts/embedded/redis-server';
import { cpuOf } from './cost';
import type { Backends } from './deployment';
import { measureStatusUpdates } from './service-load';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  let bytes = 0;
  const receiver = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const redis = await startRedisServer();
  const mongo = await startJongodb();
  const probeRedis = createRedis({ url: redis.url, cluster: false });
  try {
    const backends: Backends = {
      mongoUrl: mongo.url,
      redisUrl: redis.url,
      redisProcesses: [{ name: 'redis', pid: redis.process.pid! }],
      logDir: fs.mkdtempSync(path.join(os.tmpdir(), 'pos-bench-tracing-')),
      serverProcesses: [],
      redis: probeRedis,
    };
    const variants: [string, Record<string, string>][] = [
      ['off', {}],
      ['on', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }],
    ];
    const bounds = { maxOps: 50_000, maxMs: Number(process.env.BENCH_SECONDS ?? 8) * 1000, warmupOps: 1000 };
    // BENCH_TRACING=off: the off runs only (to compare with the code before tracing existed)
    const chosen = variants.filter(([label]) => (process.env.BENCH_TRACING ?? label) === label);
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const [label, env] of chosen) {
        const before = bytes;
        const [result] = await measureStatusUpdates(backends, { concurrencies: [16], orders: 256, bounds, say: () => undefined, label, variant: { name: label, env } });
        const ops = result!.cost?.ops ?? 1;
        say(
          `tracing ${label}: ${result!.rps} rps, p50 ${result!.p50Ms} ms, p99 ${result!.p99Ms} ms; CPU per update: api ${cpuOf(result!.cost, (r) => r === 'api1')} ms, worker ${cpuOf(result!.cost, (r) => r === 'worker')} ms; OTLP ${Math.round((bytes - before) / ops)} B/update`,
        );
      }
    }
  } finally {
    probeRedis.disconnect();
    await mongo.stop();
    await redis.stop();
    receiver.close();
  }
}

void main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
