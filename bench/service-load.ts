/**
 * The service under request load over HTTP: status updates (the queue and worker path) and
 * location polls (the read path), each on its own fresh deployment, and their floors: the
 * thinnest correct programs built from the service's own parts (bench/bare), run beside the
 * deployment on its database, so that floor and service read and write the same documents.
 */
import type { AdminClient } from '@pos/shared/clients/admin-client';
import { SAMPLE_ROWS } from '../scripts/embedded/sample-rows';
import { type CostProbe, type CpuShare, measureCpu, type WatchedProcess } from './cost';
import {
  type BenchChild,
  type Backends,
  type Deployment,
  deploy,
  probeOf,
  profileArgs,
  redisProcesses,
  spawnNode,
} from './deployment';
import { alternateHttp, type HttpRequest, type HttpSide, type LoadBounds, type LoadResult, runHttp } from './load';

/** Runs `count` async jobs at most `width` at a time. */
export async function inBatches<T>(count: number, width: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await job(i);
      }
    }),
  );
  return results;
}

/** A probe of a run on the deployment, its stop after the variant's work settled. */
const runProbe = (deployment: Deployment, variant: Variant | undefined) =>
  deployment.probe(variant?.settled && (() => variant.settled!(deployment)));

/** Locations whose failure threshold is 1000 (failure reports keep their orders PLACED), each with a register key. */
export const registers = (admin: AdminClient, count: number, name: string) =>
  inBatches(count, 4, async (i) => {
    const location = await admin.createLocation(`${name} ${i + 1}`, 1000);
    return {
      locationId: location.id,
      apiKey: (await admin.createServiceSession(location.id, 'bench-register')).apiKey,
    };
  });

/** `count` PLACED orders spread over the locations in turn, each with its register's key. */
export const placedOrders = (admin: AdminClient, locations: { locationId: string; apiKey: string }[], count: number) =>
  inBatches(count, 8, async (i) => {
    const location = locations[i % locations.length]!;
    return { ...location, number: (await admin.createOrder(location.locationId, SAMPLE_ROWS)).number };
  });

export interface StatusUpdateResult extends LoadResult {
  /** Locations the orders belong to (the partitions follow locations). */
  locations: number;
  redisCpu: CpuShare[];
  /** The floor at the same concurrency, measured right after on the same database. */
  floor?: LoadResult;
  /** A variant's own figures after the run (Variant.report). */
  report?: Record<string, number>;
}

/** A deployment's settings beyond the bench's own: a feature switched on (its cost row), or none. */
export interface Variant {
  name: string;
  env: Record<string, string>;
  /** Run on the deployment before its measured runs (a webhook subscription). */
  setup?(deployment: Deployment): Promise<void>;
  /**
   * Resolves once the work a run caused beyond its answers is done (deliveries), so that it counts in the run's cost.
   */
  settled?(deployment: Deployment): Promise<void>;
  /** Its status update concurrencies (16 unless said), and its own floor's settings if it has one. */
  concurrencies?: number[];
  floorEnv?: Record<string, string>;
  /** What its work came to (deliveries, signatures), after its runs. */
  report?(deployment: Deployment): Promise<Record<string, number>>;
}

export interface PollResult extends LoadResult {
  records: number;
  /** The poll floor on the same location's orders, right after. */
  floor?: LoadResult;
}

/**
 * PUT statusupdate `FAILED` on PLACED orders of locations whose failure threshold is 1000: a real
 * transition that puts the order back in PLACED, so a few orders carry the whole run. Each client
 * has orders of its own (no races), client k's in location k modulo `locations`.
 */
export async function measureStatusUpdates(
  backends: Backends,
  options: {
    concurrencies: number[];
    orders: number;
    locations?: number;
    bounds: LoadBounds;
    say(line: string): void;
    label?: string;
    floor?: boolean;
    variant?: Variant;
  },
): Promise<StatusUpdateResult[]> {
  // Each deployment its own log files (a label's runs apart).
  const name = `${options.label ? `${options.label.trim()}-` : ''}status${options.variant ? `-${options.variant.name}` : ''}`;
  const deployment = await deploy(name, backends, { env: options.variant?.env });
  await options.variant?.setup?.(deployment);
  const floor = options.floor ? await startStatusFloor(backends, deployment, options.variant?.floorEnv) : undefined;
  const locationCount = options.locations ?? 1;
  try {
    const locations = await registers(deployment.admin, locationCount, 'Bench status updates');
    const targets = await placedOrders(deployment.admin, locations, options.orders);
    // The floor's orders are its own: its writes add to their failure counts too.
    const floorTargets = floor ? await placedOrders(deployment.admin, locations, options.orders) : [];
    // Each update adds one to an order's failure count, which must stay below the threshold.
    const bounds = { ...options.bounds, maxOps: Math.min(options.bounds.maxOps, targets.length * 300) };
    const results: StatusUpdateResult[] = [];
    for (const c of options.concurrencies) {
      const perClient = Math.floor(targets.length / c);
      const body = JSON.stringify({ newState: 'FAILED' });
      // the floor's request: the same update, its location named instead of authenticated
      const update =
        (list: typeof targets, floor: boolean) =>
        (client: number, iteration: number): HttpRequest => {
          const { apiKey, locationId, number } = list[client + c * (iteration % perClient)]!;
          const headers: Record<string, string> = floor ? { 'x-location': locationId } : { api_key: apiKey };
          return { method: 'PUT', path: `${floor ? '' : '/api/v1'}/orders/${number}/statusupdate`, headers, body };
        };
      const of = `${options.label ?? ''}status updates${options.variant ? ` (${options.variant.name})` : ''} c=${c}, ${locationCount} location(s)`;
      const service = {
        origin: deployment.apis[0]!.origin,
        request: update(targets, false),
        probe: runProbe(deployment, options.variant),
      };
      const floorSide = floor && { origin: floor.origin, request: update(floorTargets, true), probe: floor.probe() };
      const { result, floorResult, redisCpu } = await serviceAndFloor(
        c,
        service,
        floorSide,
        bounds,
        redisProcesses(backends),
      );
      options.say(`${of}: ${result.rps} rps, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, errors ${result.errors}`);
      if (floorResult)
        options.say(
          `${of}, floor: ${floorResult.rps} rps, p50 ${floorResult.p50Ms} ms, p99 ` +
            `${floorResult.p99Ms} ms, errors ${floorResult.errors}`,
        );
      const report = await options.variant?.report?.(deployment);
      results.push({
        ...result,
        locations: locationCount,
        redisCpu,
        ...(floorResult ? { floor: floorResult } : {}),
        ...(report ? { report } : {}),
      });
    }
    return results;
  } finally {
    await floor?.stop();
    await deployment.stop();
  }
}

/**
 * The service's run, then its floor's. At one client, where the figures are latency's and a run of
 * a few seconds meets whatever phase the machine is in, the two alternate in slices instead
 * (runAlternating), so that both meet the same phases. `redis`: the Redis processes whose share of
 * a core the service's run is reported with (one after the other only).
 */
async function serviceAndFloor(
  c: number,
  service: HttpSide,
  floor: HttpSide | undefined,
  bounds: LoadBounds,
  redis: WatchedProcess[] = [],
) {
  if (floor && c === 1) {
    const [result, floorResult] = await alternateHttp(c, [service, floor], bounds);
    return { result, floorResult, redisCpu: [] as CpuShare[] };
  }
  let cpu: ReturnType<typeof measureCpu> | undefined;
  const result = await runHttp(
    service.origin,
    c,
    service.request,
    bounds,
    service.probe,
    () => (cpu = measureCpu(redis)),
  );
  const redisCpu = cpu?.stop() ?? [];
  const floorResult = floor && (await runHttp(floor.origin, c, floor.request, bounds, floor.probe));
  return { result, floorResult, redisCpu };
}

/**
 * GET /orders/location on locations holding 10 and 200 PLACED orders, at each
 * concurrency; with `floor`, the poll floor after each run.
 */
export async function measureLocationPolls(
  backends: Backends,
  options: {
    concurrencies: number[];
    records: number[];
    bounds: LoadBounds;
    say(line: string): void;
    floor?: boolean;
    variant?: Variant;
  },
): Promise<PollResult[]> {
  const deployment = await deploy(`polls${options.variant ? `-${options.variant.name}` : ''}`, backends, {
    env: options.variant?.env,
  });
  await options.variant?.setup?.(deployment);
  const floor = options.floor ? await startPollFloor(backends, deployment) : undefined;
  try {
    const { admin } = deployment;
    const results: PollResult[] = [];
    for (const records of options.records) {
      const location = await admin.createLocation(`Bench polls ${records}`);
      const { apiKey } = await admin.createServiceSession(location.id, 'bench-register');
      await inBatches(records, 1, () => admin.createOrder(location.id, SAMPLE_ROWS));
      for (const c of options.concurrencies) {
        const poll = { method: 'GET', path: '/api/v1/orders/location', headers: { api_key: apiKey }, startsWith: '[' };
        const floorPoll = {
          method: 'GET',
          path: `/orders/location?locationId=${encodeURIComponent(location.id)}`,
          startsWith: '[',
        };
        const service = {
          origin: deployment.apis[0]!.origin,
          request: () => poll,
          probe: runProbe(deployment, options.variant),
        };
        const { result, floorResult } = await serviceAndFloor(
          c,
          service,
          floor && { origin: floor.origin, request: () => floorPoll, probe: floor.probe() },
          options.bounds,
        );
        const of = `location polls${options.variant ? ` (${options.variant.name})` : ''} ${records} orders c=${c}`;
        options.say(`${of}: ${result.rps} rps, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`);
        if (floorResult)
          options.say(`${of}, floor: ${floorResult.rps} rps, p50 ${floorResult.p50Ms} ms, p99 ${floorResult.p99Ms} ms`);
        results.push({ ...result, records, ...(floorResult ? { floor: floorResult } : {}) });
      }
    }
    return results;
  } finally {
    await floor?.stop();
    await deployment.stop();
  }
}

interface Floor {
  origin: string;
  probe(): CostProbe;
  stop(): Promise<void>;
}

const floorEnv = (backends: Backends, deployment: Deployment) => ({
  MONGO_URL: backends.mongoUrl,
  MONGO_DB: deployment.db,
  REDIS_URL: backends.redisUrl,
  REDIS_PREFIX: `${deployment.redisPrefix}:floor`,
});

const metricsOf = (child: BenchChild) => `http://127.0.0.1:${/"metricsPort":(\d+)/.exec(child.ready[0])![1]}/metrics`;

/**
 * Koa, one `find` of the location's PLACED orders, records out
 * (bench/bare/poll-floor.ts): `GET /orders/location?locationId=`.
 */
async function startPollFloor(backends: Backends, deployment: Deployment): Promise<Floor> {
  const child = await spawnNode(
    'floor-poll',
    'bench/bare/poll-floor.ts',
    floorEnv(backends, deployment),
    /"port":(\d+),"metricsPort":\d+/,
    backends.logDir,
    profileArgs(backends, `${deployment.name}-floor-poll`),
  );
  return {
    origin: `http://127.0.0.1:${child.ready[1]}`,
    probe: () =>
      probeOf(
        backends,
        [{ role: 'floor-api', pid: child.process.pid! }],
        [{ role: 'floor-api', metricsUrl: metricsOf(child) }],
      ),
    stop: () => child.stop(),
  };
}

/**
 * Koa → `Queue.add` → a worker's `findOne` and version-guarded `findOneAndUpdate` → reply on
 * pub/sub (bench/bare/status-floor-*.ts): `PUT /orders/{n}/statusupdate` with `x-location`.
 */
async function startStatusFloor(
  backends: Backends,
  deployment: Deployment,
  extraEnv: Record<string, string> = {},
): Promise<Floor> {
  const env = { ...floorEnv(backends, deployment), ...extraEnv };
  const worker = await spawnNode(
    'floor-status-worker',
    'bench/bare/status-floor-worker.ts',
    env,
    /"metricsPort":\d+/,
    backends.logDir,
    profileArgs(backends, `${deployment.name}-floor-worker`),
  );
  let api: BenchChild;
  try {
    api = await spawnNode(
      'floor-status-api',
      'bench/bare/status-floor-api.ts',
      env,
      /"port":(\d+)/,
      backends.logDir,
      profileArgs(backends, `${deployment.name}-floor-api`),
    );
  } catch (err) {
    await worker.stop();
    throw err;
  }
  return {
    origin: `http://127.0.0.1:${api.ready[1]}`,
    probe: () =>
      probeOf(
        backends,
        [
          { role: 'floor-api', pid: api.process.pid! },
          { role: 'floor-worker', pid: worker.process.pid! },
        ],
        [{ role: 'floor-worker', metricsUrl: metricsOf(worker) }],
      ),
    stop: async () => {
      await api.stop();
      await worker.stop();
    },
  };
}
