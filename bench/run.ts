/**
 * `npm run bench` (docs/benchmark-method.md): Redis and MongoDB (REDIS_URL, MONGO_URL, or started
 * here), the service's roles as processes, each scenario against its floor in the same run; the
 * tables printed and bench/results/latest.json written (BENCH_RAW=1: raw.json too). BENCH_ONLY=a,b
 * runs those scenarios, BENCH_QUICK=1 a short smoke run: both to quick.json. `--compare`
 * (bench:quick): each target against latest.json's; `--profile`: the roles write CPU profiles.
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
import { measureArchiveLoad } from './archive-load';
import { measureMenus } from './menu-load';
import type { Backends } from './deployment';
import { EVENT_LOG_KEPT, EVENT_LOG_TRIM_MS } from './deployment';
import type { LoadBounds } from './load';
import type { WatchedProcess } from './cost';
import { renderTables } from './report';
import { measureOverload, parsePhases } from './overload';
import type { BenchResults, ClusterResults, Machine } from './results';
import { measureLocationPolls, measureStatusUpdates } from './service-load';
import { startFeatureVariants } from './feature-variants';
import { presenceCost } from './presence-cost';
import { measureRelay } from './relay-throughput';
import type { VariantResult } from './results';
import { raiseFileLimit } from './stream-holders';
import { measureChainStreams, measureFanOut, measureStreams } from './streams';
import { renderComparison, summarise, type Summary } from './summary';
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
/** Orders created across the chain while its fan-out is measured (4 at a time). */
const CHAIN_EVENTS = quick ? 50 : 500;
/**
 * Orders the status updates cycle through (64 clients get four each), over a
 * chain's locations: the queue partitions follow locations.
 */
const STATUS_ORDERS = 256;
const STATUS_LOCATIONS = 16;
const CLUSTER_CONCURRENCIES = [16, 64];
const CLUSTER_FANOUT = quick ? 50 : 1000;
// Finished orders before the orders-piling-up scenario's second variant; 2,000 by default: the stand-in's archive
// slows with every order, and seeding 10,000 stalled past 6,000 (a real mongod: set it higher).
const ARCHIVE_FINISHED = quick ? 1000 : number('BENCH_ARCHIVE_ORDERS', 2_000);
/** Alternating rounds of the two variants (each: status updates, then polls). */
const ARCHIVE_ROUNDS = quick ? 2 : 4;
/** Customer orders priced from a menu at these concurrencies; the locations one menu is published to. */
const MENU_CONCURRENCIES = [1, 16];
const MENU_PUBLISH_LOCATIONS = quick ? 100 : 1_000;

const PROFILE = process.argv.includes('--profile');
/** `--compare` (npm run bench:quick): each figure with a target, against the committed latest.json. */
const COMPARE = process.argv.includes('--compare');
const ONLY = process.env.BENCH_ONLY?.split(',');
const runs = (scenario: string) => !ONLY || ONLY.includes(scenario);

const say = (line: string) => process.stdout.write(`bench │ ${line}\n`);

/** A server's pid when it runs on this machine (its CPU is then read from /proc). */
async function localPid(url: string, kind: 'redis' | 'mongo'): Promise<number | undefined> {
  if (!/^[a-z+]+:\/\/(?:[^@/]*@)?(localhost|127\.0\.0\.1|\[::1\])[:/]/.test(url)) return undefined;
  if (kind === 'redis') {
    const redis = createRedis({ url, cluster: false });
    return redis
      .info('server')
      .then((info) => Number(/process_id:(\d+)/.exec(info)?.[1]) || undefined)
      .finally(() => redis.disconnect());
  }
  const client = new (await import('mongodb')).MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  return client
    .db('admin')
    .command({ serverStatus: 1 })
    .then(
      (status) => Number(status.pid) || undefined,
      () => undefined,
    )
    .finally(() => client.close());
}

function git(args: string): string | undefined {
  try {
    return execSync(`git ${args}`, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 })
      .toString()
      .trim();
  } catch {
    return undefined;
  }
}

function committedSummary(): Summary | undefined {
  const text = git('show HEAD:bench/results/latest.json');
  return text ? summarise(JSON.parse(text) as BenchResults) : undefined;
}

function sourceCommit(): BenchResults['commit'] {
  const sha = git('rev-parse HEAD');
  return sha ? { sha, dirty: git('status --porcelain --untracked-files=no') !== '' } : undefined;
}

async function machine(redisUrl: string, mongo: string): Promise<Machine> {
  const redis = createRedis({ url: redisUrl, cluster: false });
  const info = await redis.info('server').finally(() => redis.disconnect());
  const round2 = (l: number) => Math.round(l * 100) / 100;
  return {
    nproc: os.availableParallelism(),
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    mongo,
    ulimitNofile: execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim(),
    loadAverageStart: os.loadavg().map(round2),
  };
}

/** Redis and MongoDB: those of REDIS_URL and MONGO_URL, else started here (redis-server, the stand-in). */
async function startBackends(logDir: string, children: ChildServer[], closers: (() => Promise<void>)[]) {
  const serverProcesses: WatchedProcess[] = [];
  const start = async (
    kind: 'redis' | 'mongo',
    url: string | undefined,
    started: () => Promise<ChildServer & { url: string }>,
  ) => {
    const server = url ? undefined : await started();
    if (server) children.push(server);
    const pid = server?.process.pid ?? (await localPid(url!, kind));
    if (pid) serverProcesses.push({ role: kind, pid });
    return url ?? server!.url;
  };
  const redisUrl = await start('redis', process.env.REDIS_URL, startRedisServer);
  const mongoUrl = await start('mongo', process.env.MONGO_URL, startJongodb);
  const redis = createRedis({ url: redisUrl, cluster: false });
  closers.push(() => redis.quit().then(() => undefined));
  const profileDir = PROFILE ? path.join(logDir, 'profiles') : undefined;
  const backends: Backends = { mongoUrl, redisUrl, logDir, serverProcesses, redis, profileDir };
  return {
    backends,
    mongo: process.env.MONGO_URL ? 'MONGO_URL (a real MongoDB)' : 'the in-memory stand-in (jongodb), not a real mongod',
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
    const { backends, mongo } = await startBackends(logDir, children, closers);
    // for the processes started from here that hold one end of the streams (the API nodes, the client processes)
    raiseFileLimit(Math.max(STREAMS, CHAIN_STREAMS, ...FANOUT_LEVELS) + 1_000, say);
    const host = await machine(backends.redisUrl, mongo);
    say(
      `${host.nproc} cores, ${host.memoryGiB} GiB, Node ${host.node}, Redis ${host.redis}, ` +
        `MongoDB: ${mongo}; ulimit -n ${host.ulimitNofile}; logs in ${logDir}`,
    );
    const bounds: LoadBounds = { maxOps: MAX_OPS, maxMs: SECONDS * 1000, warmupOps: WARMUP_OPS };
    const status = { orders: STATUS_ORDERS, locations: STATUS_LOCATIONS, bounds, say };
    const statusUpdates = runs('status')
      ? await measureStatusUpdates(backends, { ...status, concurrencies: CONCURRENCIES, floor: true })
      : [];
    const locationPolls = runs('polls')
      ? await measureLocationPolls(backends, {
          concurrencies: CONCURRENCIES,
          records: POLL_RECORDS,
          bounds,
          say,
          floor: true,
        })
      : [];
    const variants = runs('variants') ? await measureVariants(backends, bounds, closers) : undefined;
    const presence = presenceCost(
      backends.redis,
      locationPolls.find((p) => p.concurrency === POLL_CONCURRENCY && p.records === POLL_RECORDS[0])?.cost,
    );
    say(
      `presence: ${presence.trackerCpuNsPerRequest} ns of tracker CPU per ` +
        `request, ${presence.redisCommandsPerPoll} Redis writes per poll`,
    );
    // (as many orders as a status run's collection holds: its own and its floor's)
    const relay = runs('relay') ? await measureRelay(backends, { orders: 2 * STATUS_ORDERS, say }) : undefined;
    const fanOut = runs('fanout')
      ? await measureFanOut(backends, { levels: FANOUT_LEVELS, submissions: FANOUT_SUBMISSIONS, say })
      : [];
    const streams =
      runs('streams') && STREAMS > 0
        ? await measureStreams(backends, {
            streams: STREAMS,
            clientProcesses: STREAMS >= 5_000 ? 4 : 2,
            events: STREAM_EVENTS,
            say,
          })
        : undefined;
    const chain = {
      streams: CHAIN_STREAMS,
      locations: CHAIN_STREAMS / 2,
      clientProcesses: CHAIN_STREAMS >= 5_000 ? 4 : 2,
      events: CHAIN_EVENTS,
      concurrency: 4,
      say,
    };
    const chainStreams = runs('chain') && CHAIN_STREAMS > 0 ? await measureChainStreams(backends, chain) : undefined;
    const cluster = runs('cluster') ? await measureOnCluster(backends, status) : undefined;
    const archive = runs('archive')
      ? await measureArchiveLoad(backends, {
          finishedOrders: ARCHIVE_FINISHED,
          concurrency: POLL_CONCURRENCY,
          rounds: ARCHIVE_ROUNDS,
          bounds,
          say,
        })
      : undefined;
    const menus = runs('menu')
      ? await measureMenus(backends, {
          concurrencies: MENU_CONCURRENCIES,
          publishLocations: MENU_PUBLISH_LOCATIONS,
          bounds,
          say,
        })
      : undefined;
    const phases = parsePhases(process.env.BENCH_OVERLOAD_PHASES);
    const overload = runs('overload')
      ? await measureOverload(backends, { phases, capacityBounds: { ...bounds, maxOps: 1_000_000 }, say })
      : undefined;
    const commit = sourceCommit();
    const results: BenchResults = {
      startedAt: new Date(started).toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      ...(commit ? { commit } : {}),
      machine: { ...host, loadAverageEnd: os.loadavg().map((l) => Math.round(l * 100) / 100) },
      settings: {
        secondsPerRun: SECONDS,
        maxOpsPerRun: MAX_OPS,
        warmupOps: WARMUP_OPS,
        fanOutSubmissions: FANOUT_SUBMISSIONS,
      },
      statusUpdates,
      collections: {
        statusOrders: STATUS_ORDERS,
        locations: STATUS_LOCATIONS,
        pollOrders: POLL_RECORDS,
        eventLogKept: EVENT_LOG_KEPT,
        note:
          'each deployment (every concurrency and variant) on a fresh database, its floor on the same documents ' +
          `right after; the event log and the webhook delivery log trimmed to as many every ${EVENT_LOG_TRIM_MS} ms`,
      },
      locationPolls,
      ...(variants ? { variants } : {}),
      presence,
      ...(relay ? { relay } : {}),
      fanOut,
      ...(archive ? { archive } : {}),
      ...menus,
      ...(overload ? { overload } : {}),
      ...(streams ? { streams } : {}),
      // a socket costs the same whatever location it serves: the one-location level's floors hold for both
      ...(chainStreams
        ? {
            chainStreams: {
              ...chainStreams,
              ...(streams?.streams === chainStreams.streams ? { memoryFloors: streams.memoryFloors } : {}),
            },
          }
        : {}),
      ...(cluster ? { cluster } : {}),
      logs: logDir,
    };
    process.stdout.write(`\n${renderTables(results)}\n\n`);
    if (COMPARE) process.stdout.write(`${renderComparison(summarise(results), committedSummary())}\n\n`);
    if (backends.profileDir)
      process.stdout.write(`CPU profiles in ${backends.profileDir} (open them in Chrome DevTools or speedscope)\n\n`);
    // a short or partial run never stands in for a full one
    const name = quick || ONLY ? 'quick.json' : 'latest.json';
    const dir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, name), compactJson(summaryOnly(results)));
    if (process.env.BENCH_RAW === '1')
      fs.writeFileSync(path.join(dir, 'raw.json'), `${JSON.stringify(results, null, 2)}\n`);
    say(`wrote bench/results/${name}${process.env.BENCH_RAW === '1' ? ' and raw.json' : ''}`);
  } finally {
    await stopChildren();
  }
}

/**
 * Features measured as cost rows of their own (bench/feature-variants.ts): the
 * same status updates and polls with their settings.
 */
async function measureVariants(
  backends: Backends,
  bounds: LoadBounds,
  closers: (() => Promise<void>)[],
): Promise<VariantResult[]> {
  const features = await startFeatureVariants();
  closers.push(features.stop);
  const variants: VariantResult[] = [];
  for (const variant of features.variants) {
    const options = {
      concurrencies: variant.concurrencies ?? [16],
      orders: STATUS_ORDERS,
      locations: STATUS_LOCATIONS,
      bounds,
      say,
      variant,
      floor: variant.floorEnv !== undefined,
    };
    const statusUpdates = await measureStatusUpdates(backends, options);
    const [poll] = await measureLocationPolls(backends, {
      concurrencies: [POLL_CONCURRENCY],
      records: [POLL_RECORDS[0]!],
      bounds,
      say,
      variant,
    });
    variants.push({ name: variant.name, env: variant.env, statusUpdates, poll: poll! });
  }
  return variants;
}

/**
 * The status updates and the 1,000-stream fan-out on a Redis Cluster (a node timeout
 * long enough that a loaded machine never fails a master over).
 */
async function measureOnCluster(
  single: Backends,
  status: Omit<Parameters<typeof measureStatusUpdates>[1], 'concurrencies'>,
): Promise<ClusterResults> {
  const cluster = await startRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 5_000 });
  // INFO commandstats of every master, for the runs' cost
  const redis = createRedis({ url: cluster.url, cluster: true });
  try {
    const roles = await clusterRoles(cluster.nodes[0]!.port);
    const nodes = cluster.nodes
      .map((node) => ({ role: roles.get(node.port)!, pid: node.pid! }))
      .sort((a, b) => a.role.localeCompare(b.role));
    say(`cluster: 3 masters, 3 replicas at ${cluster.url}`);
    // MongoDB's process, and each Redis process under its name
    const serverProcesses = [...single.serverProcesses.filter((p) => p.role === 'mongo'), ...nodes];
    const backends: Backends = {
      ...single,
      redisUrl: cluster.url,
      redisCluster: true,
      serverProcesses,
      redis,
      profileDir: undefined,
    };
    const statusUpdates = await measureStatusUpdates(backends, {
      ...status,
      concurrencies: CLUSTER_CONCURRENCIES,
      label: 'cluster ',
    });
    const fanOut = await measureFanOut(backends, {
      levels: [CLUSTER_FANOUT],
      submissions: FANOUT_SUBMISSIONS,
      say,
      label: 'cluster ',
    });
    return { shape: '3 masters, 3 replicas', partitions: CLUSTER_QUEUE_PARTITIONS, statusUpdates, fanOut };
  } finally {
    redis.disconnect();
    await cluster.stop();
  }
}

/** Each node's name by its port: `master <port>` or `replica <port>` (CLUSTER NODES). */
async function clusterRoles(port: number): Promise<Map<number, string>> {
  const redis = createRedis({ url: `redis://127.0.0.1:${port}`, cluster: false });
  const nodes = String(await redis.call('CLUSTER', 'NODES').finally(() => redis.disconnect()))
    .trim()
    .split('\n');
  return new Map(
    nodes.map((line) => {
      const [, address, flags] = line.split(' ');
      const port = Number(/:(\d+)@/.exec(address!)?.[1]);
      return [port, `${flags!.includes('master') ? 'master' : 'replica'} ${port}`];
    }),
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
