/**
 * One isolated deployment of the service for a scenario: a worker and API nodes as processes of
 * their own (each logging to a file, so that logging costs what it costs in production), on a
 * fresh database and Redis prefix: the stand-in slows as collections grow, so no scenario
 * inherits another's documents.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { AdminClient } from '@pos/shared/clients/admin-client';
import type { RedisClient } from '@pos/shared/redis';
import { REQUEST_TIMEOUT_MS } from '@pos/shared/clients/json-http';
import { ROLE_READY, roleEntry, spawnNode as spawnEntry } from '../scripts/embedded/spawn-role';
import { CostProbe, MongoCounter, WatchedProcess } from './cost';

export interface Backends {
  mongoUrl: string;
  /** One Redis, or the seed list of a Redis Cluster when `redisCluster` is set. */
  redisUrl: string;
  redisCluster?: boolean;
  logDir: string;
  /**
   * Redis and MongoDB server processes on this machine, when known (their CPU is
   * measured): `mongo`, and `redis` or a cluster's nodes.
   */
  serverProcesses: WatchedProcess[];
  /** A Redis connection of the benchmark itself (INFO commandstats). */
  redis: RedisClient;
  /** Where API and worker processes write CPU profiles (`--profile`); unset: not profiled. */
  profileDir?: string;
}

export const redisProcesses = (backends: Backends) => backends.serverProcesses.filter((p) => p.role !== 'mongo');

/** The probe of a floor's runs: its processes, Redis and MongoDB. */
export function probeOf(
  backends: Backends,
  processes: WatchedProcess[],
  mongoCounters: MongoCounter[] = [],
): CostProbe {
  return new CostProbe({
    processes: [...processes, ...backends.serverProcesses],
    redis: backends.redis,
    mongoCounters,
  });
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
  /** Its ADMIN_TOKEN: for a call beyond the admin client's (one with a longer deadline). */
  adminToken: string;
  /** Its API_KEY_SECRET: a scenario that seeds sessions into its database signs their keys with it. */
  apiKeySecret: string;
  apis: ApiNode[];
  worker: BenchChild;
  admin: AdminClient;
  /** A probe over this deployment's processes, Redis and MongoDB; `settled` is awaited before its stop's readings. */
  probe(settled?: () => Promise<void>): CostProbe;
  stop(): Promise<void>;
}

const WORKER_READY = /"metricsPort":(\d+)[^\n]*"msg":"worker ready"/;

export function profileArgs(backends: Backends, name: string): string[] {
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
  const secret = () => randomBytes(16).toString('hex');
  const env = {
    MONGO_URL: backends.mongoUrl,
    REDIS_URL: backends.redisUrl,
    MONGO_DB: id,
    REDIS_PREFIX: id,
    ADMIN_TOKEN: `bench-${secret()}`,
    API_KEY_SECRET: `bench-keys-${secret()}`,
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    SSE_MAX_STREAMS: String(options.maxStreams ?? 10_000),
    // The streams share a few register keys, and the fan-outs make all their
    // orders with one customer before submitting them.
    SSE_MAX_STREAMS_PER_SESSION: '10000',
    CUSTOMER_MAX_OPEN_ORDERS: '1000',
    ...(backends.redisCluster ? { REDIS_CLUSTER: '1' } : {}),
    ...options.env,
  };
  const trim = trimLogs(backends.mongoUrl, id);
  const worker = await spawnNode(
    `${name}-worker`,
    roleEntry('worker'),
    env,
    WORKER_READY,
    backends.logDir,
    profileArgs(backends, `${name}-worker`),
  );
  const apis: ApiNode[] = [];
  try {
    for (let i = 0; i < apiCount; i += 1) {
      const nodeArgs = [...(options.apiNodeArgs ?? []), ...profileArgs(backends, `${name}-api${i + 1}`)];
      const child = await spawnNode(
        `${name}-api${i + 1}`,
        roleEntry('api'),
        env,
        ROLE_READY.api,
        backends.logDir,
        nodeArgs,
      );
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
    adminToken: env.ADMIN_TOKEN,
    apiKeySecret: env.API_KEY_SECRET,
    apis,
    worker,
    admin: new AdminClient(apis[0]!.origin, env.ADMIN_TOKEN),
    probe(settled?: () => Promise<void>) {
      const roles = [
        ...apis.map((api, i) => ({ role: `api${i + 1}`, child: api.child, origin: api.origin })),
        { role: 'worker', child: worker, origin: `http://127.0.0.1:${worker.ready[1]}` },
      ];
      const processes = [
        ...roles.map(({ role, child }) => ({ role, pid: child.process.pid! })),
        ...backends.serverProcesses,
      ];
      const mongoCounters = roles.map(({ role, origin }) => ({
        role,
        metricsUrl: `${origin}/metrics`,
        headers: metricsHeaders(origin),
      }));
      return new CostProbe({ processes, mongoCounters, redis: backends.redis, settled });
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
  const response = await fetch(`${origin}/metrics`, {
    headers: metricsHeaders(origin),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/**
 * Keeps the event log and the webhook delivery log at their newest EVENT_LOG_KEPT, standing in for
 * the service's retention at the bench's pace: the stand-in slows as a collection grows (an insert
 * into a log of 8,000 took a second), a real MongoDB does not.
 */
export const EVENT_LOG_KEPT = 100;
export const EVENT_LOG_TRIM_MS = 250;

function trimLogs(mongoUrl: string, db: string): { stop(): Promise<void> } {
  const client = new MongoClient(mongoUrl);
  const events = client.db(db).collection<{ _id: number }>('events');
  // (a delivery attempt's id is a UUIDv7: its order is its time's)
  const attempts = client.db(db).collection<{ _id: string }>('webhookDeliveries');
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(async () => {
        const top = await events
          .find({}, { projection: { _id: 1 } })
          .sort({ _id: -1 })
          .limit(1)
          .next();
        if (top && top._id > EVENT_LOG_KEPT) await events.deleteMany({ _id: { $lte: top._id - EVENT_LOG_KEPT } });
        const kept = await attempts
          .find({}, { projection: { _id: 1 } })
          .sort({ _id: -1 })
          .skip(EVENT_LOG_KEPT)
          .limit(1)
          .next();
        if (kept) await attempts.deleteMany({ _id: { $lte: kept._id } });
      })
      .catch(() => undefined);
  }, EVENT_LOG_TRIM_MS);
  return { stop: () => (clearInterval(timer), running.then(() => client.close())) };
}

export interface BenchChild {
  process: ChildProcess;
  /** The first match of the ready pattern. */
  ready: RegExpMatchArray;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((child) => child.kill('SIGKILL')));

/** Starts `node --require tsx/cjs [nodeArgs] <entry>`, its log in logDir, and waits until the log matches `ready`. */
export async function spawnNode(
  name: string,
  entry: string,
  env: Record<string, string>,
  ready: RegExp,
  logDir: string,
  nodeArgs: string[] = [],
): Promise<BenchChild> {
  const child = await spawnEntry({
    name,
    entry,
    env,
    ready,
    logFile: path.join(logDir, `${name}.log`),
    nodeArgs,
    timeoutMs: 60_000,
    onSpawn: (spawned) => {
      running.add(spawned);
      spawned.once('exit', () => running.delete(spawned));
    },
  });
  return {
    process: child.process,
    ready: child.ready,
    async stop() {
      if (child.process.exitCode !== null || child.process.signalCode !== null) return;
      child.process.kill('SIGTERM');
      const timer = setTimeout(() => child.process.kill('SIGKILL'), 15_000);
      await child.exited;
      clearTimeout(timer);
    },
  };
}
