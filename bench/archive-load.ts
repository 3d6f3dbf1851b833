/**
 * Orders piling up: status updates and location polls on a fresh database, and on one where
 * 10,000 orders were created and completed through the service beforehand, with the lifecycle
 * job running in both (it archives finished orders while a background register keeps finishing a
 * trickle of new ones). The ratio of the two is the figure: what history costs the live work.
 *
 * Status updates are failure reports below the threshold on 256 orders of the location that
 * holds the history (as in the status-update scenario); polls are of a location with 10 PLACED
 * orders (as in the location-poll scenario). Both deployments stay up and are measured in
 * alternation (fresh, backlog, backlog, fresh, ...), so that a load that comes and goes on the
 * machine weighs on both alike; each variant's figure is the median over its rounds.
 */
import { SAMPLE_ROWS } from '../scripts/embedded/sample-rows';
import type { Backends, Deployment } from './deployment';
import { deploy, scrapeMetrics } from './deployment';
import { httpCall, keepAliveTarget, LoadBounds, LoadResult, runLoad } from './load';
import { round } from './statistics';
import { inBatches } from './service-load';

/** The lifecycle settings of both deployments: a fast pace, so that the job works during the runs. */
const LIFECYCLE_ENV = { ORDER_ARCHIVE_AFTER: '5s', LIFECYCLE_INTERVAL: '5s' };
/** Orders per second the background register creates and completes during the measured runs. */
const CHURN_PER_SECOND = 5;
const STATUS_ORDERS = 256;
const POLL_ORDERS = 10;

export interface ArchiveVariant {
  name: 'fresh' | 'backlog';
  /** Finished orders created before the runs. */
  finishedBefore: number;
  /** Seconds to create and complete them, and after that for the job to have moved them all. */
  seedSeconds: number;
  catchUpSeconds: number;
  /** Documents when the first round started and when the last ended (the API's /metrics). */
  hotAtStart: number;
  archivedAtStart: number;
  hotAtEnd: number;
  archivedAtEnd: number;
  /** Lifecycle runs during its rounds, the orders they archived, their mean duration. */
  runs: number;
  archivedDuringRuns: number;
  runMeanMs: number;
  /** Each round's runs, and their median (rps, p50 and p99 each the median over rounds). */
  statusRounds: LoadResult[];
  pollRounds: LoadResult[];
  statusUpdates: LoadResult;
  polls: LoadResult;
}

export interface ArchiveScenario {
  settings: { lifecycle: Record<string, string>; churnPerSecond: number; concurrency: number; rounds: number; secondsPerRun: number };
  variants: ArchiveVariant[];
  /** Backlog over fresh: p50 multiple and throughput share, per measure. */
  ratio: { statusP50: number; statusRps: number; pollP50: number; pollRps: number };
}

/**
 * Runs order creations one at a time: the stand-in's findOneAndUpdate (the number sequence) is
 * not atomic under concurrency, and two creations at once can draw the same number there.
 */
function serializer() {
  let chain: Promise<unknown> = Promise.resolve();
  return <T>(create: () => Promise<T>): Promise<T> => {
    const run = chain.then(create);
    chain = run.catch(() => undefined);
    return run;
  };
}

const metric = (samples: Map<string, number>, key: string) => samples.get(key) ?? 0;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : round((sorted[mid - 1]! + sorted[mid]!) / 2);
};

/** The median run: each figure the median over the rounds, counts summed. */
function medianOf(runs: LoadResult[]): LoadResult {
  return {
    concurrency: runs[0]!.concurrency,
    ops: runs.reduce((n, r) => n + r.ops, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    seconds: round(runs.reduce((n, r) => n + r.seconds, 0), 3),
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    maxMs: Math.max(...runs.map((r) => r.maxMs)),
    errorSamples: runs.flatMap((r) => r.errorSamples).slice(0, 3),
  };
}

interface Snapshot {
  hot: number;
  archived: number;
  runs: number;
  runSeconds: number;
  archivedTotal: number;
}

/**
 * The deployment's figures from /metrics. A collection count that MongoDB did not give within a
 * second is left out of a scrape (on the stand-in, a count waits behind an insert into the
 * archive): scrape again.
 */
async function snapshot(deployment: Deployment): Promise<Snapshot> {
  let samples = await scrapeMetrics(deployment.apis[0]!.origin);
  for (let attempt = 1; attempt < 10 && !samples.has('pos_order_documents{collection="orderArchive"}'); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    samples = await scrapeMetrics(deployment.apis[0]!.origin);
  }
  return {
    hot: metric(samples, 'pos_order_documents{collection="orders"}'),
    archived: metric(samples, 'pos_order_documents{collection="orderArchive"}'),
    runs: metric(samples, 'pos_lifecycle_runs_total'),
    runSeconds: metric(samples, 'pos_lifecycle_run_seconds_total'),
    archivedTotal: metric(samples, 'pos_lifecycle_documents_total{action="archived"}'),
  };
}

/** One deployment ready to be measured: its history seeded and archived. */
interface Prepared {
  name: ArchiveVariant['name'];
  deployment: Deployment;
  finishedBefore: number;
  seedSeconds: number;
  catchUpSeconds: number;
  /** The location with the history; its status-update orders and the churn are there. */
  locationId: string;
  numbers: number[];
  headers: Record<string, string>;
  pollHeaders: Record<string, string>;
  statusRounds: LoadResult[];
  pollRounds: LoadResult[];
  first?: Snapshot;
  last?: Snapshot;
  /** Lifecycle runs and their time during the rounds only. */
  runs: number;
  runSeconds: number;
  archivedDuringRuns: number;
}

const COMPLETE = JSON.stringify({ newState: 'COMPLETED' });

async function prepare(backends: Backends, name: Prepared['name'], finishedBefore: number, say: (line: string) => void): Promise<Prepared> {
  const deployment = await deploy(`archive-${name}`, backends, { env: LIFECYCLE_ENV });
  try {
    const { admin } = deployment;
    const origin = deployment.apis[0]!.origin;
    const location = await admin.createLocation(`Bench archive ${name}`, 1000);
    const headers = { api_key: (await admin.createServiceSession(location.id, 'bench-register')).apiKey };
    const pollLocation = await admin.createLocation(`Bench archive ${name} polls`);
    const pollHeaders = { api_key: (await admin.createServiceSession(pollLocation.id, 'bench-register')).apiKey };

    // The location's history: orders created and completed through the service, the job archiving as they finish.
    const setup = keepAliveTarget(origin, 16);
    const serially = serializer();
    const seedStarted = Date.now();
    let seeded = 0;
    await inBatches(finishedBefore, 16, async () => {
      const order = await serially(() => admin.createOrder(location.id, SAMPLE_ROWS));
      await httpCall(setup, 'PUT', `/api/v1/orders/${order.number}/statusupdate`, { headers, body: COMPLETE });
      if (++seeded % 2000 === 0) say(`archive ${name}: ${seeded} orders created and completed`);
    });
    setup.agent.destroy();
    const seedSeconds = round((Date.now() - seedStarted) / 1000, 1);
    const numbers = (await inBatches(STATUS_ORDERS, 8, () => serially(() => admin.createOrder(location.id, SAMPLE_ROWS)))).map((o) => o.number);
    await inBatches(POLL_ORDERS, 8, () => serially(() => admin.createOrder(pollLocation.id, SAMPLE_ROWS)));

    // Until the job has moved every finished order (only the open ones stay hot).
    const catchUpStarted = Date.now();
    while ((await snapshot(deployment)).hot > STATUS_ORDERS + POLL_ORDERS) {
      if (Date.now() - catchUpStarted > 600_000) throw new Error('the lifecycle job did not catch up in 10 minutes');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const catchUpSeconds = round((Date.now() - catchUpStarted) / 1000, 1);
    if (finishedBefore > 0) say(`archive ${name}: ${finishedBefore} finished orders seeded in ${seedSeconds} s, all archived ${catchUpSeconds} s later`);
    return {
      name,
      deployment,
      finishedBefore,
      seedSeconds,
      catchUpSeconds,
      locationId: location.id,
      numbers,
      headers,
      pollHeaders,
      statusRounds: [],
      pollRounds: [],
      runs: 0,
      runSeconds: 0,
      archivedDuringRuns: 0,
    };
  } catch (err) {
    await deployment.stop();
    throw err;
  }
}

/** One round on one deployment: status updates, then polls, with the background register at work. */
async function measureRound(p: Prepared, options: { concurrency: number; bounds: LoadBounds; say(line: string): void }, record = true): Promise<void> {
  const { deployment, numbers } = p;
  const origin = deployment.apis[0]!.origin;
  let churning = true;
  const churnTarget = keepAliveTarget(origin, 1);
  const churn = (async () => {
    while (churning) {
      const started = Date.now();
      const order = await deployment.admin.createOrder(p.locationId, SAMPLE_ROWS);
      await httpCall(churnTarget, 'PUT', `/api/v1/orders/${order.number}/statusupdate`, { headers: p.headers, body: COMPLETE });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 / CHURN_PER_SECOND - (Date.now() - started))));
    }
  })();
  try {
    const before = await snapshot(deployment);
    if (record) p.first ??= before;
    const c = options.concurrency;
    const updates = keepAliveTarget(origin, c);
    const failed = JSON.stringify({ newState: 'FAILED' });
    const perClient = Math.floor(numbers.length / c);
    const status = await runLoad(
      c,
      async (client, iteration) => {
        const number = numbers[client + c * (iteration % perClient)]!;
        await httpCall(updates, 'PUT', `/api/v1/orders/${number}/statusupdate`, { headers: p.headers, body: failed });
      },
      options.bounds,
    );
    updates.agent.destroy();
    const pollTarget = keepAliveTarget(origin, c);
    const polls = await runLoad(
      c,
      async () => {
        const text = await httpCall(pollTarget, 'GET', '/api/v1/orders/location', { headers: p.pollHeaders });
        if (!text.startsWith('[')) throw new Error('not a list');
      },
      options.bounds,
    );
    pollTarget.agent.destroy();
    const after = await snapshot(deployment);
    if (!record) return;
    p.last = after;
    p.runs += after.runs - before.runs;
    p.runSeconds += after.runSeconds - before.runSeconds;
    p.archivedDuringRuns += after.archivedTotal - before.archivedTotal;
    p.statusRounds.push(status);
    p.pollRounds.push(polls);
    options.say(
      `archive ${p.name} round ${p.statusRounds.length}: status updates ${status.rps} rps p50 ${status.p50Ms} ms; polls ${polls.rps} rps p50 ${polls.p50Ms} ms; ` +
        `hot ${after.hot}, archive ${after.archived}, ${after.runs - before.runs} job runs`,
    );
  } finally {
    churning = false;
    await churn;
    churnTarget.agent.destroy();
  }
}

function result(p: Prepared): ArchiveVariant {
  return {
    name: p.name,
    finishedBefore: p.finishedBefore,
    seedSeconds: p.seedSeconds,
    catchUpSeconds: p.catchUpSeconds,
    hotAtStart: p.first?.hot ?? 0,
    archivedAtStart: p.first?.archived ?? 0,
    hotAtEnd: p.last?.hot ?? 0,
    archivedAtEnd: p.last?.archived ?? 0,
    runs: p.runs,
    archivedDuringRuns: p.archivedDuringRuns,
    runMeanMs: p.runs > 0 ? round((p.runSeconds / p.runs) * 1000, 1) : 0,
    statusRounds: p.statusRounds,
    pollRounds: p.pollRounds,
    statusUpdates: medianOf(p.statusRounds),
    polls: medianOf(p.pollRounds),
  };
}

export async function measureArchiveLoad(
  backends: Backends,
  options: { finishedOrders: number; concurrency: number; rounds: number; bounds: LoadBounds; say(line: string): void },
): Promise<ArchiveScenario> {
  const prepared: Prepared[] = [];
  try {
    prepared.push(await prepare(backends, 'fresh', 0, options.say));
    prepared.push(await prepare(backends, 'backlog', options.finishedOrders, options.say));
    const [fresh, backlog] = prepared as [Prepared, Prepared];
    // A round of warm-up on each, unrecorded: the backlog's processes were warmed by the seeding,
    // the fresh ones would otherwise be measured with a colder JIT.
    for (const p of prepared) await measureRound(p, options, false);
    for (let r = 0; r < options.rounds; r++) {
      for (const p of r % 2 ? [backlog, fresh] : [fresh, backlog]) await measureRound(p, options);
    }
    const variants = [result(fresh), result(backlog)];
    const [f, b] = variants as [ArchiveVariant, ArchiveVariant];
    return {
      settings: { lifecycle: LIFECYCLE_ENV, churnPerSecond: CHURN_PER_SECOND, concurrency: options.concurrency, rounds: options.rounds, secondsPerRun: options.bounds.maxMs / 1000 },
      variants,
      ratio: {
        statusP50: round(b.statusUpdates.p50Ms / f.statusUpdates.p50Ms),
        statusRps: round(b.statusUpdates.rps / f.statusUpdates.rps),
        pollP50: round(b.polls.p50Ms / f.polls.p50Ms),
        pollRps: round(b.polls.rps / f.polls.rps),
      },
    };
  } finally {
    for (const p of prepared) await p.deployment.stop();
  }
}
