/**
 * `npm run bench`: starts Redis (embedded redis-server) and MongoDB (MONGO_URL, or the in-memory
 * stand-in), runs the service's roles as separate processes and measures each scenario against
 * its floor in the same run (docs/benchmark-method.md: the scenarios, the floors, the settings).
 * Prints the tables and writes bench/results/latest.json (summaries, one row a line; with
 * BENCH_RAW=1 also raw.json, every sample and Redis command) for `npm run docs`.
 * BENCH_ONLY=a,b runs those scenarios alone (status, polls, variants, fanout, streams, chain,
 * cluster, archive, overload), and BENCH_QUICK=1 a short smoke run: both to quick.json only.
 * `npm run bench:quick` (`--compare`) prints each figure against its target and latest.json's;
 * `--profile` has the API and worker processes write CPU profiles.
 */
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildServer } from '../scripts/embedded/child-server';
import { startJongodb } from '../scripts/embedded/jongodb';
import { startRedisCluster } from '../scripts/embedded/redis-cluster';
import { startRedisServer } from '../scripts/embedded/redis-server';
import { ROOT } from '../scripts/embedded/spawn-role';
import { CLUSTER_QUEUE_PARTITIONS } from '@pos/shared/config';
import { createRedis } from '@pos/shared/redis';
import { renderComparison } from './compare';
import { measureArchiveLoad } from './archive-load';
import type { WatchedProcess } from './cost';
import type { Backends } from './deployment';
import { EVENT_LOG_KEPT, EVENT_LOG_TRIM_MS } from './event-log-trim';
import { measureFanOut } from './fan-out';
import type { LoadBounds } from './load';
import type { RedisProcess } from './redis-cpu';
import { renderTables } from './report';
import { measureOverload, parsePhases } from './overload';
import type { BenchResults, ClusterResults, Machine, SourceCommit } from './results';
import { measureLocationPolls, measureStatusUpdates } from './service-load';
import { startFeatureVariants } from './feature-variants';
import { presenceCost } from './presence-cost';
import type { VariantResult } from './results';
import { measureStreams } from './streams';
import { measureChainStreams } from './chain-streams';
import { summarise, type Summary } from './summary';
import { compactJson, summaryOnly } from './results';

const quick = process.env.BENCH_QUICK === '1';
// Every process the bench starts (roles and floors) runs with the malloc setting of the images (see the Dockerfile).
process.env.MALLOC_ARENA_MAX ??= '2';
const number = (name: string, fallback: number) => {
  const value = process.env[name];
  return value && /^[0-9]+$/.test(value) ? Number(value) : fallback;
};
const SECONDS = number('BENCH_SECONDS', quick ? 1 : 8);
const MAX_OPS = number('BENCH_MAX_OPS', 50000);
const WARMUP_OPS = number('BENCH_WARMUP_OPS', quick ? 50 : 1000);
const CONCURRENCIES = [1, 16, 64];
const POLL_CONCURRENCY = 16;
const POLL_RECORDS = [10, 200];
const FANOUT_LEVELS = quick ? [1, 10, 50] : [1, 100, 1000];
const FANOUT_SUBMISSIONS = quick ? 5 : number('BENCH_FANOUT_SUBMISSIONS', 20);
const STREAMS = number('BENCH_STREAMS', quick ? 1_000 : 10_000);
const STREAM_EVENTS = quick ? 3 : 10;
/** The streams level in a chain's shape (BENCH_CHAIN_STREAMS; 0 leaves it out): two register streams per location. */
const CHAIN_STREAMS = number('BENCH_CHAIN_STREAMS', quick ? 1_000 : 10_000);
const CHAIN_LOCATIONS = CHAIN_STREAMS / 2;
/** Orders created across the chain while its fan-out is measured, and how many at a time. */
const CHAIN_EVENTS = quick ? 50 : 500;
const CHAIN_CONCURRENCY = 4;
/** Processes holding the streams level's connections. */
const STREAM_CLIENTS = STREAMS >= 5_000 ? 4 : 2;
/** Orders the status updates cycle through: 64 clients get four each. */
const STATUS_ORDERS = 256;
/** The locations (a chain's restaurants) those orders belong to; the queue partitions follow locations. */
const STATUS_LOCATIONS = 16;
const CLUSTER_CONCURRENCIES = [16, 64];
const CLUSTER_FANOUT = quick ? 50 : 1000;
/** Finished orders created before the orders-piling-up scenario's second variant. */
const ARCHIVE_FINISHED = quick ? 1000 : number('BENCH_ARCHIVE_ORDERS', 10_000);
/** Alternating rounds of the two variants (each: status updates, then polls). */
const ARCHIVE_ROUNDS = quick ? 2 : 4;

const PROFILE = process.argv.includes('--profile');
/** `--compare` (npm run bench:quick): each figure with a target, against the committed latest.json (bench/compare.ts). */
const COMPARE = process.argv.includes('--compare');
const ONLY = process.env.BENCH_ONLY?.split(',');
const runs = (scenario: string) => !ONLY || ONLY.includes(scenario);

const say = (line: string) => process.stdout.write(`bench │ ${line}\n`);

/** A server's pid when it runs on this machine (its CPU is then read from /proc). */
const isLocal = (url: string) => /^[a-z+]+:\/\/(?:[^@/]*@)?(localhost|127\.0\.0\.1|\[::1\])[:/]/.test(url);

async function redisPid(redisUrl: string): Promise<number | undefined> {
  if (!isLocal(redisUrl)) return undefined;
  const redis = createRedis({ url: redisUrl, cluster: false });
  try {
    return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]) || undefined;
  } finally {
    await redis.quit();
  }
}

async function mongoPid(mongoUrl: string): Promise<number | undefined> {
  if (!isLocal(mongoUrl)) return undefined;
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 5_000 });
  try {
    const status = await client.db('admin').command({ serverStatus: 1 });
    return typeof status.pid === 'number' ? status.pid : Number(status.pid) || undefined;
  } catch {
    return undefined;
  } finally {
    await client.close();
  }
}

/** The summary of the latest.json committed at HEAD (else the one on disk), if any. */
function committedSummary(): Summary | undefined {
  const read = (): string | undefined => {
    try {
      return execSync('git show HEAD:bench/results/latest.json', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 }).toString();
    } catch {
      const file = path.join(ROOT, 'bench', 'results', 'latest.json');
      return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    }
  };
  const text = read();
  return text ? summarise(JSON.parse(text) as BenchResults) : undefined;
}

/** The commit being measured (and whether the tree differs from it); undefined outside a git checkout. */
function sourceCommit(): SourceCommit | undefined {
  try {
    const sha = execSync('git rev-parse HEAD', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const dirty = execSync('git status --porcelain --untracked-files=no', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() !== '';
    return { sha, dirty };
  } catch {
    return undefined;
  }
}

async function machine(redisUrl: string, mongo: string): Promise<Machine> {
  const redis = createRedis({ url: redisUrl, cluster: false });
  const info = await redis.info('server');
  await redis.quit();
  let ulimit = 'unknown';
  try {
    ulimit = execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim();
  } catch {
    // Not a POSIX shell; the figure is informative only.
  }
  return {
    nproc: os.availableParallelism(),
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    mongo,
    ulimitNofile: ulimit,
    loadAverageStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-bench-'));
  const children: ChildServer[] = [];
  const closers: (() => Promise<void>)[] = [];
  const stopChildren = async () => {
    for (const close of closers) await close().catch(() => undefined);
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
  };
  process.once('SIGINT', () => void stopChildren().then(() => process.exit(130)));

  try {
    const serverProcesses: WatchedProcess[] = [];
    let redisUrl = process.env.REDIS_URL;
    const redisProcesses: RedisProcess[] = [];
    if (!redisUrl) {
      const redis = await startRedisServer();
      children.push(redis);
      redisUrl = redis.url;
      redisProcesses.push({ name: 'redis', pid: redis.process.pid! });
      serverProcesses.push({ role: 'redis', pid: redis.process.pid! });
    } else {
      const pid = await redisPid(redisUrl);
      if (pid) serverProcesses.push({ role: 'redis', pid });
    }
    let mongoUrl = process.env.MONGO_URL;
    let mongo = 'MONGO_URL (a real MongoDB)';
    if (!mongoUrl) {
      const jongodb = await startJongodb();
      children.push(jongodb);
      mongoUrl = jongodb.url;
      mongo = 'the in-memory stand-in (jongodb), not a real mongod';
      serverProcesses.push({ role: 'mongo', pid: jongodb.process.pid! });
    } else {
      const pid = await mongoPid(mongoUrl);
      if (pid) serverProcesses.push({ role: 'mongo', pid });
    }
    const probeRedis = createRedis({ url: redisUrl, cluster: false });
    closers.push(() => probeRedis.quit().then(() => undefined));
    const profileDir = PROFILE ? path.join(logDir, 'profiles') : undefined;
    const backends: Backends = { mongoUrl, redisUrl, redisProcesses, logDir, serverProcesses, redis: probeRedis, profileDir };
    const host = await machine(redisUrl, mongo);
    say(`${host.nproc} cores, ${host.memoryGiB} GiB, Node ${host.node}, Redis ${host.redis}, MongoDB: ${mongo}; ulimit -n ${host.ulimitNofile}; logs in ${logDir}`);
    if (/^[0-9]+$/.test(host.ulimitNofile) && Number(host.ulimitNofile) < 2 * Math.max(...FANOUT_LEVELS) + 500) {
      say(`warning: ulimit -n ${host.ulimitNofile} may be too low for ${Math.max(...FANOUT_LEVELS)} streams`);
    }

    const bounds: LoadBounds = { maxOps: MAX_OPS, maxMs: SECONDS * 1000, warmupOps: WARMUP_OPS };
    const dir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(dir, { recursive: true });
    const statusUpdates = runs('status')
      ? await measureStatusUpdates(backends, { concurrencies: CONCURRENCIES, orders: STATUS_ORDERS, locations: STATUS_LOCATIONS, bounds, say, floor: true })
      : [];
    const locationPolls = runs('polls')
      ? await measureLocationPolls(backends, { concurrencies: CONCURRENCIES, records: POLL_RECORDS, bounds, say, floor: true })
      : [];
    const variants = runs('variants') ? await measureVariants(backends, bounds, closers) : [];
    const presence = presenceCost(probeRedis, locationPolls.find((p) => p.concurrency === POLL_CONCURRENCY && p.records === POLL_RECORDS[0])?.cost);
    say(`presence: ${presence.trackerCpuNsPerRequest} ns of tracker CPU per request, ${presence.redisCommandsPerPoll} Redis writes per poll`);
    const fanOut = runs('fanout')
      ? await measureFanOut(backends, { levels: FANOUT_LEVELS, submissions: FANOUT_SUBMISSIONS, warmup: 2, say })
      : { levels: [], memory: { streams: 0, nodes: [], rssPerStreamKiB: 0, heapPerStreamKiB: 0 } };
    const streams =
      runs('streams') && STREAMS > 0 ? await measureStreams(backends, { streams: STREAMS, clientProcesses: STREAM_CLIENTS, events: STREAM_EVENTS, say }) : undefined;
    const chainStreams =
      runs('chain') && CHAIN_STREAMS > 0
        ? await measureChainStreams(backends, {
            streams: CHAIN_STREAMS,
            locations: CHAIN_LOCATIONS,
            clientProcesses: CHAIN_STREAMS >= 5_000 ? 4 : 2,
            events: CHAIN_EVENTS,
            concurrency: CHAIN_CONCURRENCY,
            say,
          })
        : undefined;
    const cluster = runs('cluster') ? await measureOnCluster({ mongoUrl, logDir, bounds, serverProcesses }) : undefined;
    const archive = runs('archive')
      ? await measureArchiveLoad(backends, { finishedOrders: ARCHIVE_FINISHED, concurrency: POLL_CONCURRENCY, rounds: ARCHIVE_ROUNDS, bounds, say })
      : undefined;
    const overload = runs('overload')
      ? await measureOverload(backends, { phases: parsePhases(process.env.BENCH_OVERLOAD_PHASES), capacityBounds: { ...bounds, maxOps: 1_000_000 }, say })
      : undefined;

    const commit = sourceCommit();
    const results: BenchResults = {
      startedAt: new Date(started).toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      ...(commit ? { commit } : {}),
      machine: { ...host, loadAverageEnd: os.loadavg().map((l) => Math.round(l * 100) / 100) },
      settings: { secondsPerRun: SECONDS, maxOpsPerRun: MAX_OPS, warmupOps: WARMUP_OPS, fanOutSubmissions: FANOUT_SUBMISSIONS },
      statusUpdates,
      collections: {
        statusOrders: STATUS_ORDERS,
        locations: STATUS_LOCATIONS,
        pollOrders: POLL_RECORDS,
        eventLogKept: EVENT_LOG_KEPT,
        note: `each deployment (every concurrency and variant) on a fresh database, its floor on the same documents right after; the event log and the webhook delivery log trimmed to as many every ${EVENT_LOG_TRIM_MS} ms`,
      },
      locationPolls,
      ...(variants.length > 0 ? { variants } : {}),
      presence,
      fanOut: fanOut.levels,
      streamMemory: fanOut.memory!,
      ...(archive ? { archive } : {}),
      ...(overload ? { overload } : {}),
      ...(streams ? { streams } : {}),
      // a socket costs the same whatever location it serves: the one-location level's floors hold for both
      ...(chainStreams ? { chainStreams: { ...chainStreams, ...(streams?.streams === chainStreams.streams ? { memoryFloors: streams.memoryFloors } : {}) } } : {}),
      ...(cluster ? { cluster } : {}),
      logs: logDir,
    };

    process.stdout.write(`\n${renderTables(results)}\n\n`);
    if (COMPARE) process.stdout.write(`${renderComparison(summarise(results), committedSummary())}\n\n`);
    if (profileDir) process.stdout.write(`CPU profiles in ${profileDir} (open them in Chrome DevTools or speedscope)\n\n`);
    // a short or partial run never stands in for a full one
    const name = quick || ONLY ? 'quick.json' : 'latest.json';
    fs.writeFileSync(path.join(dir, name), compactJson(summaryOnly(results)));
    if (process.env.BENCH_RAW === '1') fs.writeFileSync(path.join(dir, 'raw.json'), `${JSON.stringify(results, null, 2)}\n`);
    say(`wrote bench/results/${name}${process.env.BENCH_RAW === '1' ? ' and raw.json' : ''}`);
  } finally {
    await stopChildren();
  }
}

/**
 * Features measured as cost rows of their own (bench/feature-variants.ts): the service started
 * with their settings, the same status updates and polls at 16 clients, each against the same
 * run's floor. Presence is always on: its share of a poll is isolated instead (presence-cost.ts).
 */
async function measureVariants(backends: Backends, bounds: LoadBounds, closers: (() => Promise<void>)[]): Promise<VariantResult[]> {
  const features = await startFeatureVariants();
  closers.push(features.stop);
  const variants: VariantResult[] = [];
  for (const variant of features.variants) {
    const statusUpdates = await measureStatusUpdates(backends, {
      concurrencies: variant.concurrencies ?? [16],
      orders: STATUS_ORDERS,
      locations: STATUS_LOCATIONS,
      bounds,
      say,
      variant,
      floor: variant.floorEnv !== undefined,
    });
    const [poll] = await measureLocationPolls(backends, { concurrencies: [POLL_CONCURRENCY], records: [POLL_RECORDS[0]!], bounds, say, variant });
    variants.push({ name: variant.name, env: variant.env, statusUpdates, poll: poll! });
  }
  return variants;
}

/**
 * The cluster scenarios: a Redis Cluster of 3 masters and 3 replicas (its node timeout long
 * enough that a loaded machine never fails a master over by mistake), the status updates at 16
 * and 64 clients over 16 locations and the 1,000-stream fan-out, each with every Redis process's
 * CPU share.
 */
async function measureOnCluster(options: { mongoUrl: string; logDir: string; bounds: LoadBounds; serverProcesses: WatchedProcess[] }): Promise<ClusterResults> {
  const cluster = await startRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 5_000 });
  // INFO commandstats of every master, for the runs' cost
  const probeRedis = createRedis({ url: cluster.url, cluster: true });
  try {
    const masterPorts = await clusterMasters(cluster.nodes[0]!.port);
    const redisProcesses: RedisProcess[] = [];
    for (const node of cluster.nodes) {
      const master = masterPorts.get(node.port);
      if (master === undefined) continue;
      redisProcesses.push({ name: `master ${master.index}`, pid: node.pid! });
    }
    for (const node of cluster.nodes) {
      if (masterPorts.has(node.port)) continue;
      const of = (await replicaOf(node.port)) ?? 0;
      redisProcesses.push({ name: `replica of ${masterPorts.get(of)?.index ?? '?'}`, pid: node.pid! });
    }
    say(`cluster: 3 masters, 3 replicas at ${cluster.url}`);
    const backends: Backends = {
      mongoUrl: options.mongoUrl,
      redisUrl: cluster.url,
      redisCluster: true,
      redisProcesses,
      logDir: options.logDir,
      // MongoDB's, and each Redis process's under its name
      serverProcesses: [...options.serverProcesses.filter((p) => p.role !== 'redis'), ...redisProcesses.map((p) => ({ role: p.name, pid: p.pid }))],
      redis: probeRedis,
    };
    const statusUpdates = await measureStatusUpdates(backends, {
      concurrencies: CLUSTER_CONCURRENCIES,
      orders: STATUS_ORDERS,
      locations: STATUS_LOCATIONS,
      bounds: options.bounds,
      say,
      label: 'cluster ',
    });
    const fanOut = await measureFanOut(backends, { levels: [CLUSTER_FANOUT], submissions: FANOUT_SUBMISSIONS, warmup: 2, say, label: 'cluster ' });
    return { shape: '3 masters, 3 replicas', partitions: CLUSTER_QUEUE_PARTITIONS, statusUpdates, fanOut: fanOut.levels };
  } finally {
    probeRedis.disconnect();
    await cluster.stop();
  }
}

/** Master ports, numbered 1, 2, 3 in the order of their slots. */
async function clusterMasters(port: number): Promise<Map<number, { index: number }>> {
  const redis = createRedis({ url: `redis://127.0.0.1:${port}`, cluster: false });
  try {
    const ranges = (await redis.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    ranges.sort((a, b) => a[0] - b[0]);
    return new Map(ranges.map(([, , [, masterPort]], i) => [masterPort, { index: i + 1 }]));
  } finally {
    redis.disconnect();
  }
}

async function replicaOf(port: number): Promise<number | undefined> {
  const redis = createRedis({ url: `redis://127.0.0.1:${port}`, cluster: false });
  try {
    const info = await redis.info('replication');
    const match = /master_port:(\d+)/.exec(info);
    return match ? Number(match[1]) : undefined;
  } finally {
    redis.disconnect();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
