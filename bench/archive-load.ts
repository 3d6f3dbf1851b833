/**
 * Orders piling up: status updates and polls on a fresh database, and on one holding thousands of
 * finished orders, the lifecycle job running in both while a register finishes a trickle of new
 * ones. Measured in alternating rounds, so a load that comes and goes weighs on both; medians.
 */
import { SAMPLE_ROWS } from '../scripts/embedded/sample-rows';
import type { Backends, Deployment } from './deployment';
import { deploy, scrapeMetrics } from './deployment';
import { httpCall, keepAliveTarget, type LoadBounds, type LoadResult, runHttp } from './load';
import { round } from './statistics';
import { inBatches, registers } from './service-load';

/** A fast pace, so that the job works during the runs. */
const LIFECYCLE_ENV = { ORDER_ARCHIVE_AFTER: '5s', LIFECYCLE_INTERVAL: '5s' };
/** Orders per second the background register creates and completes during the measured runs. */
const CHURN_PER_SECOND = 5;
const STATUS_ORDERS = 256;
const POLL_ORDERS = 10;
const COMPLETE = JSON.stringify({ newState: 'COMPLETED' });
const FAILED = JSON.stringify({ newState: 'FAILED' });

export interface ArchiveVariant {
  name: 'fresh' | 'backlog';
  finishedBefore: number;
  /** Seconds to create and complete them, and after that for the job to have moved them all. */
  seedSeconds: number;
  catchUpSeconds: number;
  /** Documents when the first round started and when the last ended. */
  hotAtStart: number;
  archivedAtStart: number;
  hotAtEnd: number;
  archivedAtEnd: number;
  /** Lifecycle runs during its rounds, the orders they archived, their mean duration. */
  runs: number;
  archivedDuringRuns: number;
  runMeanMs: number;
  /** The median round (each figure the median over rounds, counts summed). */
  statusUpdates: LoadResult;
  polls: LoadResult;
}

export interface ArchiveScenario {
  settings: {
    lifecycle: Record<string, string>;
    churnPerSecond: number;
    concurrency: number;
    rounds: number;
    secondsPerRun: number;
  };
  variants: ArchiveVariant[];
  /** Backlog over fresh: p50 multiple and throughput share, per measure. */
  ratio: { statusP50: number; statusRps: number; pollP50: number; pollRps: number };
}

/** Order creations one at a time: the stand-in's number sequence can draw one number twice under concurrency. */
function serializer() {
  let chain: Promise<unknown> = Promise.resolve();
  return <T>(create: () => Promise<T>): Promise<T> => {
    const run = chain.then(create);
    chain = run.catch(() => undefined);
    return run;
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : round((sorted[mid - 1]! + sorted[mid]!) / 2);
};

function medianOf(runs: LoadResult[]): LoadResult {
  const sum = (key: 'ops' | 'errors' | 'seconds') =>
    round(
      runs.reduce((n, r) => n + r[key], 0),
      3,
    );
  return {
    concurrency: runs[0]!.concurrency,
    ops: sum('ops'),
    errors: sum('errors'),
    seconds: sum('seconds'),
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    maxMs: Math.max(...runs.map((r) => r.maxMs)),
    errorSamples: runs.flatMap((r) => r.errorSamples).slice(0, 3),
  };
}

/**
 * The deployment's figures from /metrics; a count MongoDB did not give
 * within a second is left out of a scrape: scrape again.
 */
type Snapshot = Awaited<ReturnType<typeof snapshot>>;
async function snapshot(deployment: Deployment) {
  let samples = await scrapeMetrics(deployment.apis[0]!.origin);
  for (let attempt = 1; attempt < 10 && !samples.has('pos_order_documents{collection="orderArchive"}'); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    samples = await scrapeMetrics(deployment.apis[0]!.origin);
  }
  const metric = (key: string) => samples.get(key) ?? 0;
  return {
    hot: metric('pos_order_documents{collection="orders"}'),
    archived: metric('pos_order_documents{collection="orderArchive"}'),
    runs: metric('pos_lifecycle_runs_total'),
    runSeconds: metric('pos_lifecycle_run_seconds_total'),
    archivedTotal: metric('pos_lifecycle_documents_total{action="archived"}'),
  };
}

/** One deployment, its history seeded and archived, and the rounds measured on it. */
class Variant {
  private readonly rounds: { status: LoadResult; polls: LoadResult; before: Snapshot; after: Snapshot }[] = [];
  private seedSeconds = 0;
  private catchUpSeconds = 0;
  private numbers: number[] = [];
  /** The location with the history (its status updates and churn there), and the polled one. */
  private history = { locationId: '', apiKey: '' };
  private polled = { locationId: '', apiKey: '' };

  constructor(
    readonly name: ArchiveVariant['name'],
    readonly deployment: Deployment,
    private readonly finishedBefore: number,
  ) {}

  async prepare(say: (line: string) => void): Promise<void> {
    const { admin } = this.deployment;
    [this.history, this.polled] = (await registers(admin, 2, `Bench archive ${this.name}`)) as [
      typeof this.history,
      typeof this.polled,
    ];
    const { locationId } = this.history;
    // The location's history: orders created and completed through the service, the job archiving as they finish.
    const setup = keepAliveTarget(this.deployment.apis[0]!.origin, 16);
    const serially = serializer();
    const seedStarted = Date.now();
    let seeded = 0;
    await inBatches(this.finishedBefore, 16, async () => {
      const order = await serially(() => admin.createOrder(locationId, SAMPLE_ROWS));
      await httpCall(setup, 'PUT', `/api/v1/orders/${order.number}/statusupdate`, {
        headers: { api_key: this.history.apiKey },
        body: COMPLETE,
      });
      if (++seeded % 2000 === 0) say(`archive ${this.name}: ${seeded} orders created and completed`);
    });
    setup.agent.destroy();
    this.seedSeconds = round((Date.now() - seedStarted) / 1000, 1);
    this.numbers = (
      await inBatches(STATUS_ORDERS, 8, () => serially(() => admin.createOrder(locationId, SAMPLE_ROWS)))
    ).map((o) => o.number);
    await inBatches(POLL_ORDERS, 8, () => serially(() => admin.createOrder(this.polled.locationId, SAMPLE_ROWS)));
    // Until the job has moved every finished order (only the open ones stay hot).
    const catchUpStarted = Date.now();
    while ((await snapshot(this.deployment)).hot > STATUS_ORDERS + POLL_ORDERS) {
      if (Date.now() - catchUpStarted > 600_000) throw new Error('the lifecycle job did not catch up in 10 minutes');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    this.catchUpSeconds = round((Date.now() - catchUpStarted) / 1000, 1);
    if (this.finishedBefore > 0)
      say(
        `archive ${this.name}: ${this.finishedBefore} finished orders seeded in ` +
          `${this.seedSeconds} s, all archived ${this.catchUpSeconds} s later`,
      );
  }

  /** One round: status updates, then polls, with the background register at work. */
  async round(
    options: { concurrency: number; bounds: LoadBounds; say(line: string): void },
    record = true,
  ): Promise<void> {
    const origin = this.deployment.apis[0]!.origin;
    let churning = true;
    const churnTarget = keepAliveTarget(origin, 1);
    const churn = (async () => {
      while (churning) {
        const started = Date.now();
        const order = await this.deployment.admin.createOrder(this.history.locationId, SAMPLE_ROWS);
        await httpCall(churnTarget, 'PUT', `/api/v1/orders/${order.number}/statusupdate`, {
          headers: { api_key: this.history.apiKey },
          body: COMPLETE,
        });
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, 1000 / CHURN_PER_SECOND - (Date.now() - started))),
        );
      }
    })();
    try {
      const before = await snapshot(this.deployment);
      const c = options.concurrency;
      const perClient = Math.floor(this.numbers.length / c);
      const headers = { api_key: this.history.apiKey };
      const status = await runHttp(
        origin,
        c,
        (client, i) => ({
          method: 'PUT',
          path: `/api/v1/orders/${this.numbers[client + c * (i % perClient)]!}/statusupdate`,
          headers,
          body: FAILED,
        }),
        options.bounds,
      );
      const poll = {
        method: 'GET',
        path: '/api/v1/orders/location',
        headers: { api_key: this.polled.apiKey },
        startsWith: '[',
      };
      const polls = await runHttp(origin, c, () => poll, options.bounds);
      const after = await snapshot(this.deployment);
      if (!record) return;
      this.rounds.push({ status, polls, before, after });
      options.say(
        `archive ${this.name} round ${this.rounds.length}: status updates ${status.rps} rps, ` +
          `polls ${polls.rps} rps; hot ${after.hot}, archive ${after.archived}`,
      );
    } finally {
      churning = false;
      await churn;
      churnTarget.agent.destroy();
    }
  }

  result(): ArchiveVariant {
    const [first, last] = [this.rounds[0]!.before, this.rounds.at(-1)!.after];
    const during = (key: keyof Snapshot) => this.rounds.reduce((sum, r) => sum + r.after[key] - r.before[key], 0);
    const { name, finishedBefore, seedSeconds, catchUpSeconds } = this;
    const runs = during('runs');
    return {
      name,
      finishedBefore,
      seedSeconds,
      catchUpSeconds,
      hotAtStart: first.hot,
      archivedAtStart: first.archived,
      hotAtEnd: last.hot,
      archivedAtEnd: last.archived,
      runs,
      archivedDuringRuns: during('archivedTotal'),
      runMeanMs: runs > 0 ? round((during('runSeconds') / runs) * 1000, 1) : 0,
      statusUpdates: medianOf(this.rounds.map((r) => r.status)),
      polls: medianOf(this.rounds.map((r) => r.polls)),
    };
  }
}

export async function measureArchiveLoad(
  backends: Backends,
  options: { finishedOrders: number; concurrency: number; rounds: number; bounds: LoadBounds; say(line: string): void },
): Promise<ArchiveScenario> {
  const variants: Variant[] = [];
  try {
    for (const [name, finished] of [
      ['fresh', 0],
      ['backlog', options.finishedOrders],
    ] as const) {
      variants.push(new Variant(name, await deploy(`archive-${name}`, backends, { env: LIFECYCLE_ENV }), finished));
      await variants.at(-1)!.prepare(options.say);
    }
    const [fresh, backlog] = variants as [Variant, Variant];
    // A warm-up round each, unrecorded: the backlog's processes were warmed by the seeding.
    for (const v of variants) await v.round(options, false);
    for (let r = 0; r < options.rounds; r++)
      for (const v of r % 2 ? [backlog, fresh] : [fresh, backlog]) await v.round(options);
    const [f, b] = [fresh.result(), backlog.result()];
    return {
      settings: {
        lifecycle: LIFECYCLE_ENV,
        churnPerSecond: CHURN_PER_SECOND,
        concurrency: options.concurrency,
        rounds: options.rounds,
        secondsPerRun: options.bounds.maxMs / 1000,
      },
      variants: [f, b],
      ratio: {
        statusP50: round(b.statusUpdates.p50Ms / f.statusUpdates.p50Ms),
        statusRps: round(b.statusUpdates.rps / f.statusUpdates.rps),
        pollP50: round(b.polls.p50Ms / f.polls.p50Ms),
        pollRps: round(b.polls.rps / f.polls.rps),
      },
    };
  } finally {
    for (const v of variants) await v.deployment.stop();
  }
}
