/**
 * The service under request load over HTTP: status updates (the queue and worker path) and
 * location polls (the read path), each on its own fresh deployment.
 */
import { SAMPLE_ROWS } from '../scripts/embedded/sample-rows';
import type { Backends, Deployment } from './deployment';
import { deploy, scrapeMetrics } from './deployment';
import { startPollFloor, startStatusFloor } from './floors';
import { httpCall, keepAliveTarget, LoadBounds, LoadResult, runLoad } from './load';
import { CpuShare, measureCpu } from './redis-cpu';

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

export interface StatusUpdateResult extends LoadResult {
  serverJobMeanMs: number;
  /** Locations the orders belong to (the partitions follow locations). */
  locations: number;
  /** Each Redis process's CPU during the run. */
  redisCpu: CpuShare[];
  /** The floor at the same concurrency, measured right after on the same database (bench/floors.ts). */
  floor?: LoadResult;
  /** A variant's own figures after the run (Variant.report). */
  report?: Record<string, number>;
}

/** A deployment's settings beyond the bench's own: a feature switched on (its cost row), or none. */
export interface Variant {
  name: string;
  env: Record<string, string>;
  /** Run on the deployment before its measured runs (e.g. a webhook subscription). */
  setup?(deployment: Deployment): Promise<void>;
  /** Resolves once the work a run caused beyond its answers is done (e.g. deliveries), so that it counts in the run's cost. */
  settled?(): Promise<void>;
  /** The status update concurrencies it is measured at (16 unless said). */
  concurrencies?: number[];
  /** Its own status update floor's settings (the floor's FLOOR_WEBHOOK_URL), measured after each run; none: no floor of its own. */
  floorEnv?: Record<string, string>;
  /** What the variant's work came to (its deliveries, their signatures), once its runs are over. */
  report?(deployment: Deployment): Promise<Record<string, number>>;
}

export interface PollResult extends LoadResult {
  records: number;
  /** The poll floor on the same location's orders, right after (bench/floors.ts). */
  floor?: LoadResult;
}

/**
 * PUT statusupdate `FAILED` on PLACED orders of locations whose failure threshold is 1000:
 * each update is a real transition (a queued job, a version-guarded write of the order, an
 * event published) that puts the order back in PLACED, so a few orders carry the whole run
 * and the collection stays small. Each virtual client has orders of its own (no races), all in
 * one location (client k's in location k modulo `locations`).
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
    /** Measure the floor after each concurrency's run. */
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
    const { admin } = deployment;
    const locations = await inBatches(locationCount, 4, async (i) => {
      const location = await admin.createLocation(`Bench status updates ${i + 1}`, 1000);
      const { apiKey } = await admin.createServiceSession(location.id, 'bench-register');
      return { id: location.id, apiKey };
    });
    const targets = await inBatches(options.orders, 8, async (i) => {
      const location = locations[i % locationCount]!;
      return { apiKey: location.apiKey, number: (await admin.createOrder(location.id, SAMPLE_ROWS)).number };
    });
    // The floor's orders are its own: its writes add to their failure counts too.
    const floorTargets = floor
      ? await inBatches(options.orders, 8, async (i) => {
          const location = locations[i % locationCount]!;
          return { locationId: location.id, number: (await admin.createOrder(location.id, SAMPLE_ROWS)).number };
        })
      : [];
    // Each update adds one to an order's failure count, which must stay below the threshold.
    const bounds = { ...options.bounds, maxOps: Math.min(options.bounds.maxOps, targets.length * 300) };
    const results: StatusUpdateResult[] = [];
    for (const c of options.concurrencies) {
      const jobsBefore = jobTotals(await scrapeMetrics(deployment.apis[0]!.origin));
      const target = keepAliveTarget(deployment.apis[0]!.origin, c);
      const probe = deployment.probe(options.variant?.settled);
      const perClient = Math.floor(targets.length / c);
      const body = JSON.stringify({ newState: 'FAILED' });
      let cpu: ReturnType<typeof measureCpu> | undefined;
      const result = await runLoad(
        c,
        async (client, iteration) => {
          const { apiKey, number } = targets[client + c * (iteration % perClient)]!;
          await httpCall(target, 'PUT', `/api/v1/orders/${number}/statusupdate`, { headers: { api_key: apiKey }, body });
        },
        bounds,
        probe,
        () => (cpu = measureCpu(backends.redisProcesses)),
      );
      const redisCpu = cpu?.stop() ?? [];
      target.agent.destroy();
      // The API's own view (GET /metrics): enqueue to worker reply, warm-up included.
      const jobsAfter = jobTotals(await scrapeMetrics(deployment.apis[0]!.origin));
      const count = jobsAfter.count - jobsBefore.count;
      const serverJobMeanMs = count > 0 ? Math.round(((jobsAfter.sum - jobsBefore.sum) / count) * 1e5) / 100 : 0;
      options.say(
        `${options.label ?? ''}status updates${options.variant ? ` (${options.variant.name})` : ''} c=${c}, ${locationCount} location(s): ${result.rps} rps, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, job mean ${serverJobMeanMs} ms, errors ${result.errors}`,
      );
      let floorResult: LoadResult | undefined;
      if (floor) {
        const floorTarget = keepAliveTarget(floor.origin, c);
        floorResult = await runLoad(
          c,
          async (client, iteration) => {
            const { locationId, number } = floorTargets[client + c * (iteration % perClient)]!;
            await httpCall(floorTarget, 'PUT', `/orders/${number}/statusupdate`, { headers: { 'x-location': locationId }, body });
          },
          bounds,
          floor.probe(),
        );
        floorTarget.agent.destroy();
        options.say(`status update floor c=${c}: ${floorResult.rps} rps, p50 ${floorResult.p50Ms} ms, p99 ${floorResult.p99Ms} ms, errors ${floorResult.errors}`);
      }
      const report = await options.variant?.report?.(deployment);
      results.push({ ...result, serverJobMeanMs, locations: locationCount, redisCpu, ...(floorResult ? { floor: floorResult } : {}), ...(report ? { report } : {}) });
    }
    return results;
  } finally {
    await floor?.stop();
    await deployment.stop();
  }
}

/** GET /orders/location on locations holding 10 and 200 PLACED orders, at each concurrency; with `floor`, the poll floor after each run. */
export async function measureLocationPolls(
  backends: Backends,
  options: { concurrencies: number[]; records: number[]; bounds: LoadBounds; say(line: string): void; floor?: boolean; variant?: Variant },
): Promise<PollResult[]> {
  const deployment = await deploy(`polls${options.variant ? `-${options.variant.name}` : ''}`, backends, { env: options.variant?.env });
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
        const target = keepAliveTarget(deployment.apis[0]!.origin, c);
        const result = await runLoad(
          c,
          async () => {
            const text = await httpCall(target, 'GET', '/api/v1/orders/location', { headers: { api_key: apiKey } });
            // A cheap check that the answer is the whole list, not an error body with a 200.
            if (!text.startsWith('[')) throw new Error('not a list');
          },
          options.bounds,
          deployment.probe(options.variant?.settled),
        );
        target.agent.destroy();
        options.say(`location polls${options.variant ? ` (${options.variant.name})` : ''} ${records} orders c=${c}: ${result.rps} rps, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`);
        let floorResult: LoadResult | undefined;
        if (floor) {
          const floorTarget = keepAliveTarget(floor.origin, c);
          const path = `/orders/location?locationId=${encodeURIComponent(location.id)}`;
          floorResult = await runLoad(
            c,
            async () => {
              const text = await httpCall(floorTarget, 'GET', path);
              if (!text.startsWith('[')) throw new Error('not a list');
            },
            options.bounds,
            floor.probe(),
          );
          floorTarget.agent.destroy();
          options.say(`poll floor ${records} orders c=${c}: ${floorResult.rps} rps, p50 ${floorResult.p50Ms} ms, p99 ${floorResult.p99Ms} ms`);
        }
        results.push({ ...result, records, ...(floorResult ? { floor: floorResult } : {}) });
      }
    }
    return results;
  } finally {
    await floor?.stop();
    await deployment.stop();
  }
}

/** Sum (seconds) and count of the API's successful order-action job round trips. */
function jobTotals(samples: Map<string, number>): { sum: number; count: number } {
  let sum = 0;
  let count = 0;
  for (const [key, value] of samples) {
    if (!key.includes('job="order-action"') || !key.includes('status="200"')) continue;
    if (key.startsWith('pos_job_duration_seconds_sum')) sum += value;
    if (key.startsWith('pos_job_duration_seconds_count')) count += value;
  }
  return { sum, count };
}
