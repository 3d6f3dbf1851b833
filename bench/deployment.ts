/**
 * One isolated deployment of the service for a scenario: a worker and one or more API nodes as
 * separate processes, on a fresh MongoDB database and Redis prefix (the MongoDB stand-in slows
 * down as collections grow, so no scenario inherits another's documents).
 */
import { EventLogTrim } from './event-log-trim';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { RedisClient } from '@pos/shared/redis';
import { REQUEST_TIMEOUT_MS } from '@pos/shared/clients/json-http';
import { ROLE_READY, roleEntry } from '../scripts/embedded/spawn-role';
import { CostProbe, MongoCounter, WatchedProcess } from './cost';
import { BenchChild, spawnNode } from './processes';
import type { RedisProcess } from './redis-cpu';

export interface Backends {
  mongoUrl: string;
  /** One Redis, or the seed list of a Redis Cluster when `redisCluster` is set. */
  redisUrl: string;
  redisCluster?: boolean;
  /** The Redis processes whose CPU the runs report (none for a Redis the bench did not start). */
  redisProcesses: RedisProcess[];
  logDir: string;
  /** Redis and MongoDB server processes on this machine, when known (their CPU is measured). */
  serverProcesses: WatchedProcess[];
  /** A Redis connection of the benchmark itself (INFO commandstats). */
  redis: RedisClient;
  /** Where API and worker processes write CPU profiles (`--profile`); unset: not profiled. */
  profileDir?: string;
}

/** The probe of runs that involve no service process (ceilings, floors): these, plus Redis and MongoDB. */
export function probeOf(backends: Backends, processes: WatchedProcess[], mongoCounters: MongoCounter[] = []): CostProbe {
  return new CostProbe({ processes: [...processes, ...backends.serverProcesses], redis: backends.redis, mongoCounters });
}

export interface ApiNode {
  origin: string;
  baseUrl: string;
  child: BenchChild;
}

export interface Deployment {
  name: string;
  /** Its MongoDB database and Redis prefix (a floor measured beside it reads the same documents). */
  db: string;
  redisPrefix: string;
  /** Its API_KEY_SECRET: a scenario that seeds sessions into its database signs their keys with it. */
  apiKeySecret: string;
  apis: ApiNode[];
  worker: BenchChild;
  admin: AdminClient;
  /** A probe over this deployment's processes, Redis and MongoDB; `settled` is awaited before its stop's readings. */
  probe(settled?: () => Promise<void>): CostProbe;
  stop(): Promise<void>;
}

/** The worker's ready line, with the port of its /metrics listener. */
const WORKER_READY = /"metricsPort":(\d+)[^\n]*"msg":"worker ready"/;

/** Node options that make a process write a CPU profile when it exits. */
function profileArgs(backends: Backends, name: string): string[] {
  if (!backends.profileDir) return [];
  fs.mkdirSync(backends.profileDir, { recursive: true });
  return ['--cpu-prof', '--cpu-prof-dir', backends.profileDir, '--cpu-prof-name', `${name}.cpuprofile`];
}

export interface DeployOptions {
  apiCount?: number;
  /** Node options of the API processes (e.g. the memory benchmark's GC hook). */
  apiNodeArgs?: string[];
  /** Configuration of the roles beyond the deployment's own (e.g. the lifecycle job's pace). */
  env?: Record<string, string>;
  /** SSE_MAX_STREAMS of the API nodes (default 10,000). */
  maxStreams?: number;
}

export async function deploy(name: string, backends: Backends, options: DeployOptions = {}): Promise<Deployment> {
  const apiCount = options.apiCount ?? 1;
  const id = `bench_${name}_${randomBytes(3).toString('hex')}`;
  const env = {
    MONGO_URL: backends.mongoUrl,
    REDIS_URL: backends.redisUrl,
    MONGO_DB: id,
    REDIS_PREFIX: id,
    ADMIN_TOKEN: `bench-${randomBytes(16).toString('hex')}`,
    API_KEY_SECRET: `bench-keys-${randomBytes(16).toString('hex')}`,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    // The fan-out's streams share a few register keys: far above the per-session default of 4.
    SSE_MAX_STREAMS_PER_SESSION: '10000',
    SSE_MAX_STREAMS: String(options.maxStreams ?? 10_000),
    // The fan-out scenarios make all their orders with one customer session before submitting them.
    CUSTOMER_MAX_OPEN_ORDERS: '1000',
    METRICS_PORT: '0',
    ...(backends.redisCluster ? { REDIS_CLUSTER: '1' } : {}),
    ...options.env,
  };
  const trim = await EventLogTrim.start(backends.mongoUrl, id);
  const worker = await spawnNode(`${name}-worker`, roleEntry('worker'), env, WORKER_READY, backends.logDir, profileArgs(backends, `${name}-worker`));
  const apis: ApiNode[] = [];
  try {
    for (let i = 0; i < apiCount; i += 1) {
      const nodeArgs = [...(options.apiNodeArgs ?? []), ...profileArgs(backends, `${name}-api${i + 1}`)];
      const child = await spawnNode(`${name}-api${i + 1}`, roleEntry('api'), env, ROLE_READY.api, backends.logDir, nodeArgs);
      const origin = `http://127.0.0.1:${child.ready[1]}`;
      adminTokens.set(origin, env.ADMIN_TOKEN);
      apis.push({ origin, baseUrl: `${origin}/api/v1`, child });
    }
  } catch (err) {
    await Promise.all([worker, ...apis.map((a) => a.child)].map((c) => c.stop()));
    await trim.stop();
    throw err;
  }
  return {
    name,
    db: id,
    redisPrefix: id,
    apiKeySecret: env.API_KEY_SECRET,
    apis,
    worker,
    admin: new AdminClient(apis[0]!.origin, env.ADMIN_TOKEN),
    probe(settled?: () => Promise<void>) {
      const workerMetrics = `http://127.0.0.1:${worker.ready[1]}/metrics`;
      return new CostProbe({
        processes: [
          ...apis.map((api, i) => ({ role: `api${i + 1}`, pid: api.child.process.pid! })),
          { role: 'worker', pid: worker.process.pid! },
          ...backends.serverProcesses,
        ],
        mongoCounters: [...apis.map((api, i) => ({ role: `api${i + 1}`, metricsUrl: `${api.origin}/metrics`, headers: metricsHeaders(api.origin) })), { role: 'worker', metricsUrl: workerMetrics }],
        redis: backends.redis,
        settled,
      });
    },
    async stop() {
      await Promise.all(apis.map((a) => a.child.stop()));
      await worker.stop();
      await trim.stop();
    },
  };
}

/** Asks the API processes for a full GC (they must run the bench/gc-on-signal.ts preload). */
export async function collectGarbage(apis: ApiNode[]): Promise<void> {
  for (const api of apis) api.child.process.kill('SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 500));
}

/** The Node options that make collectGarbage work. */
export const GC_HOOK = ['--expose-gc', '--require', path.join(__dirname, 'gc-on-signal.ts')];

/** The ADMIN_TOKEN of each API node deployed: an API node's /metrics needs an admin credential. */
const adminTokens = new Map<string, string>();

/** The headers that open `origin`'s /metrics (none for a worker's METRICS_PORT). */
function metricsHeaders(origin: string): Record<string, string> {
  const token = adminTokens.get(origin);
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/** The samples of a node's /metrics, keyed `name` or `name{labels as sent}`. */
export async function scrapeMetrics(origin: string): Promise<Map<string, number>> {
  const response = await fetch(`${origin}/metrics`, { headers: metricsHeaders(origin), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await response.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}
