/**
 * The overload scenario (docs/overload.md): the capacity C measured first (64 closed-loop
 * clients), then open-loop failure reports at multiples of C from a process of their own
 * (overload-client.ts), while a trickle of polls reads another location. One worker with
 * WORKER_CONCURRENCY=2, so that the worker, not the machine, is the bottleneck. Per phase: goodput
 * over C, p99 of the admitted and of the refusals, the API's CPU; then the recovery, the wasted
 * jobs, and the reports applied against the 200s answered.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { SAMPLE_ROWS } from '../scripts/embedded/sample-rows';
import { ROOT } from '../scripts/embedded/spawn-role';
import { type CostProbe, processCpuMs } from './cost';
import { deploy, probeOf, scrapeMetrics } from './deployment';
import type { Backends } from './deployment';
import {
  type HttpRequest,
  httpRequest,
  type HttpTarget,
  keepAliveTarget,
  type LoadBounds,
  type LoadResult,
  runHttp,
  runLoad,
} from './load';
import { OUTCOME, type OverloadPlan, type OverloadRecords, type RequestRecord } from './overload-client';
import { placedOrders, registers } from './service-load';
import { percentile, round } from './statistics';

export interface OverloadPhase {
  name: string;
  /** Of the capacity. */
  multiple: number;
  seconds: number;
}

export interface OverloadPhaseResult extends OverloadPhase {
  perSecond: number;
  /**
   * Sent; answered 200; refused at once (shed); 503s whose job a worker did not apply
   * (taken too late) and other 503s; any other status; no answer.
   */
  sent: number;
  ok: number;
  shed: number;
  notApplied: number;
  unknown: number;
  other: number;
  failed: number;
  goodputPerSecond: number;
  /** goodput / capacity, over the phase and over its second half (once the phase's load has settled in). */
  goodputRatio: number;
  secondHalfGoodputRatio: number;
  admittedP99Ms: number;
  refusalP99Ms: number;
  maxMs: number;
  /**
   * Jobs the worker finished during the phase (some for the phase
   * before's requests), and those it refused as expired.
   */
  jobsRun: number;
  jobsExpired: number;
  /** The API node's CPU over the phase, ms (its polls included). */
  apiCpuMs?: number;
}

export interface OverloadScenario {
  workerConcurrency: number;
  queueWaitTargetMs: number;
  capacity: LoadResult;
  phases: OverloadPhaseResult[];
  /** From the end of the last overload phase until every 250 ms window answers >= 99 % 200s with p99 <= 1 s. */
  recoverySeconds: number;
  /**
   * Over the whole run: the jobs the worker ran (not those it refused as expired),
   * and the share done for requests that got no success.
   */
  jobsRun: number;
  jobsExpired: number;
  wastedShare: number;
  /**
   * Failure reports applied to the orders during the open-loop phases (their failure counts), and the 200s
   * answered: equal when every acknowledged write was applied once and no refused one at all.
   */
  applied: { failureReports: number; answered200: number };
  polls: { count: number; within1sShare: number; p50Ms: number; p99Ms: number; errors: number };
  /**
   * The API node's CPU per admitted request and per refusal, ms, split over the
   * phases (apiCpuSplit); absent when they cannot be split.
   */
  apiCpu?: { perAdmittedMs: number; perRefusalMs: number; refusalShare: number };
  /**
   * The same two measured apart (see refusalsAlone): per request of the
   * capacity run, and per refusal with the worker stopped.
   */
  apiCpuApart?: { perAdmittedMs: number; perRefusalMs: number; refusalShare: number; refusals: number; others: number };
}

const DEFAULT_PHASES: OverloadPhase[] = [1, 2, 4, 0.5].map((multiple) => ({
  name: multiple < 1 ? `after, ${multiple}x` : `${multiple}x`,
  multiple,
  seconds: 10,
}));

/** `2.5:20,0.5:15`: multiples of the capacity, each for that many seconds (BENCH_OVERLOAD_PHASES). */
export function parsePhases(text: string | undefined): OverloadPhase[] {
  if (!text) return DEFAULT_PHASES;
  return text.split(',').map((part) => {
    const [multiple, seconds] = part.split(':').map(Number);
    if (!multiple || !seconds) throw new Error(`BENCH_OVERLOAD_PHASES: ${part} is not multiple:seconds`);
    return { name: `${multiple}x`, multiple, seconds };
  });
}

/**
 * BENCH_OVERLOAD_WORKER_CONCURRENCY: 2 by default (the worker is the bottleneck); 16,
 * the default of the service, makes the machine the bottleneck.
 */
const WORKER_CONCURRENCY = Number(process.env.BENCH_OVERLOAD_WORKER_CONCURRENCY ?? 2);
const JOB_TIMEOUT_MS = 10_000;
const QUEUE_WAIT_TARGET_MS = 500;
const WINDOW_MS = 250;

/** The sum of the orders' failure counts: one per failure report applied. */
async function failureCounts(mongoUrl: string, db: string): Promise<number> {
  const client = await new MongoClient(mongoUrl).connect();
  const orders = await client
    .db(db)
    .collection<{ failureCount: number }>('orders')
    .find({}, { projection: { failureCount: 1 } })
    .toArray()
    .finally(() => client.close());
  return orders.reduce((sum, order) => sum + order.failureCount, 0);
}

/**
 * The worker's order-action jobs so far (`pos_jobs_processed_total`): those it ran, and those it refused as expired.
 */
async function workerJobs(origin: string): Promise<{ run: number; expired: number }> {
  const jobs = { run: 0, expired: 0 };
  for (const [key, value] of await scrapeMetrics(origin)) {
    const status = /^pos_jobs_processed_total\{job="order-action",status="([^"]+)"\}$/.exec(key)?.[1];
    if (status) jobs[status === 'expired' ? 'expired' : 'run'] += value;
  }
  return jobs;
}

const jobsDelta = (before: { run: number; expired: number }, after: { run: number; expired: number }) => ({
  run: after.run - before.run,
  expired: after.expired - before.expired,
});

function phaseResult(
  phase: OverloadPhase,
  perSecond: number,
  records: RequestRecord[],
  capacityRps: number,
  jobs: { run: number; expired: number },
  apiCpuMs: number,
): OverloadPhaseResult {
  const count = (outcome: number) => records.filter((r) => r[3] === outcome).length;
  const ok = records.filter((r) => r[3] === OUTCOME.ok && r[2] <= JOB_TIMEOUT_MS + 1_000);
  const sorted = (outcome: number) =>
    records
      .filter((r) => r[3] === outcome)
      .map((r) => r[2])
      .sort((a, b) => a - b);
  const goodputPerSecond = ok.length / phase.seconds;
  return {
    ...phase,
    perSecond: round(perSecond, 1),
    sent: records.length,
    ok: count(OUTCOME.ok),
    shed: count(OUTCOME.shed),
    notApplied: count(OUTCOME.notApplied),
    unknown: count(OUTCOME.unknown),
    other: count(OUTCOME.other),
    failed: count(OUTCOME.failed),
    goodputPerSecond: round(goodputPerSecond, 1),
    goodputRatio: round(goodputPerSecond / capacityRps, 2),
    secondHalfGoodputRatio: round(
      ok.filter((r) => r[1] >= (phase.seconds * 1000) / 2).length / (phase.seconds / 2) / capacityRps,
      2,
    ),
    admittedP99Ms: round(percentile(sorted(OUTCOME.ok), 99)),
    refusalP99Ms: round(percentile(sorted(OUTCOME.shed), 99)),
    jobsRun: jobs.run,
    jobsExpired: jobs.expired,
    maxMs: round(Math.max(0, ...records.map((r) => r[2]))),
    apiCpuMs: round(apiCpuMs),
  };
}

/**
 * The API's CPU split over the phases by least squares: CPU = perAdmitted × admitted + perRefusal ×
 * refusals + idle × seconds (the polls, the timers). None when the phases cannot tell them apart
 * (fewer than three unknowns' worth, as with BENCH_OVERLOAD_PHASES of one overload and the fall).
 */
function apiCpuSplit(phases: OverloadPhaseResult[]): OverloadScenario['apiCpu'] {
  const rows = phases.map((p) => [p.sent - p.shed, p.shed, p.seconds, p.apiCpuMs ?? 0]);
  const m = [0, 1, 2].map((i) => [0, 1, 2, 3].map((j) => rows.reduce((sum, r) => sum + r[i]! * r[j]!, 0)));
  const det = (c: number[][]) =>
    c[0]![0]! * (c[1]![1]! * c[2]![2]! - c[1]![2]! * c[2]![1]!) -
    c[0]![1]! * (c[1]![0]! * c[2]![2]! - c[1]![2]! * c[2]![0]!) +
    c[0]![2]! * (c[1]![0]! * c[2]![1]! - c[1]![1]! * c[2]![0]!);
  const d = det(m);
  if (phases.length < 3 || Math.abs(d) < 1e-9) return undefined;
  // Cramer's rule: the unknown's column replaced by the right-hand side
  const [perAdmitted, perRefusal] = [0, 1].map(
    (k) => det(m.map((row) => row.map((x, j) => (j === k ? row[3]! : x)))) / d,
  );
  return {
    perAdmittedMs: round(perAdmitted!, 3),
    perRefusalMs: round(perRefusal!, 3),
    refusalShare: perAdmitted! > 0 ? round(perRefusal! / perAdmitted!) : 0,
  };
}

/** A 503 answered within this is a refusal at once; anything slower was admitted first. */
const AT_ONCE_MS = 100;
/**
 * Requests sent at once to fill the admission (more than it holds: some 250 here,
 * capacity × QUEUE_WAIT_TARGET), then clients refused in a loop.
 */
const HOLDERS = 512;
const REFUSAL_CLIENTS = 128;
const REFUSALS_SECONDS = 6;

/**
 * The API's CPU per refusal, measured apart from admitted requests: with the worker stopped
 * (SIGSTOP), HOLDERS requests at once fill every partition's admission and wait for their
 * deadline; a second later, when the oldest of them has waited past QUEUE_WAIT_TARGET, nothing more
 * is admitted, and REFUSAL_CLIENTS closed-loop clients are refused for REFUSALS_SECONDS, ending
 * before the holders' deadline. An upper bound: the node's CPU over the window (its timers
 * included) divided by the refusals at once.
 */
async function refusalsAlone(
  origin: string,
  workerPid: number,
  request: () => HttpRequest,
  probe: CostProbe,
): Promise<{ refusals: number; others: number; cpuMsPerRefusal: number }> {
  const targets = [keepAliveTarget(origin, HOLDERS), keepAliveTarget(origin, REFUSAL_CLIENTS)] as const;
  const counts = { refusals: 0, others: 0 };
  let counting = false;
  const send = async (target: HttpTarget) => {
    const { method, path, headers, body } = request();
    const started = performance.now();
    const { status } = await httpRequest(target, method, path, { headers, body });
    if (!counting) return;
    if (status === 503 && performance.now() - started < AT_ONCE_MS) counts.refusals += 1;
    else counts.others += 1;
  };
  process.kill(workerPid, 'SIGSTOP');
  try {
    // (answered at their deadline, or cut off with their sockets below)
    for (let i = 0; i < HOLDERS; i++) void send(targets[0]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await runLoad(REFUSAL_CLIENTS, () => send(targets[1]), { maxOps: Number.MAX_SAFE_INTEGER, maxMs: 1_000 });
    await probe.start();
    counting = true;
    await runLoad(REFUSAL_CLIENTS, () => send(targets[1]), {
      maxOps: Number.MAX_SAFE_INTEGER,
      maxMs: REFUSALS_SECONDS * 1000,
    });
    counting = false;
    const cost = await probe.stop(counts.refusals);
    return { ...counts, cpuMsPerRefusal: cost.cpuMs.api1 ?? 0 };
  } finally {
    process.kill(workerPid, 'SIGCONT');
    for (const target of targets) target.agent.destroy();
  }
}

/** Seconds from the phase's start until every later 250 ms window is healthy (>= 99 % 200s, p99 <= 1 s). */
function recoverySeconds(records: RequestRecord[], seconds: number): number {
  const windows = Math.ceil((seconds * 1000) / WINDOW_MS);
  const healthy = Array.from({ length: windows }, (_, w) => {
    const inWindow = records.filter((r) => r[1] >= w * WINDOW_MS && r[1] < (w + 1) * WINDOW_MS);
    if (inWindow.length === 0) return true;
    const ok = inWindow.filter((r) => r[3] === OUTCOME.ok).length;
    const p99 = percentile(
      inWindow.map((r) => r[2]).sort((a, b) => a - b),
      99,
    );
    return ok / inWindow.length >= 0.99 && p99 <= 1_000;
  });
  let firstOfTail = windows;
  while (firstOfTail > 0 && healthy[firstOfTail - 1]) firstOfTail -= 1;
  return (firstOfTail * WINDOW_MS) / 1000;
}

export async function measureOverload(
  backends: Backends,
  options: { phases: OverloadPhase[]; capacityBounds: LoadBounds; say(line: string): void },
): Promise<OverloadScenario> {
  const deployment = await deploy('overload', backends, {
    env: {
      WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
      JOB_TIMEOUT: `${JOB_TIMEOUT_MS}ms`,
      QUEUE_WAIT_TARGET: `${QUEUE_WAIT_TARGET_MS}ms`,
    },
  });
  try {
    const { admin } = deployment;
    const api = deployment.apis[0]!;
    const workerOrigin = `http://127.0.0.1:${deployment.worker.ready[1]}`;
    const targets = await placedOrders(admin, await registers(admin, 16, 'Bench overload'), 256);
    const polled = await admin.createLocation('Bench overload, polled');
    const pollKey = (await admin.createServiceSession(polled.id, 'bench-register')).apiKey;
    for (let i = 0; i < 10; i++) await admin.createOrder(polled.id, SAMPLE_ROWS);

    // The capacity: 64 closed-loop clients, as many requests as the workers finish.
    const body = JSON.stringify({ reason: 'bench' });
    let n = 0;
    const report = () => {
      const { apiKey, number } = targets[n++ % targets.length]!;
      return { method: 'POST', path: `/api/v1/orders/${number}/failure`, headers: { api_key: apiKey }, body };
    };
    const capacity = await runHttp(api.origin, 64, report, options.capacityBounds, deployment.probe());
    options.say(
      `overload: capacity ${capacity.rps} req/s (64 clients, ` +
        `WORKER_CONCURRENCY=${WORKER_CONCURRENCY}), errors ${capacity.errors}`,
    );

    // Open-loop phases from a process of their own.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const failuresBefore = await failureCounts(backends.mongoUrl, deployment.db);
    const out = path.join(backends.logDir, 'overload-records.json');
    const startAt = Date.now() + 1_500;
    const phasesSent = options.phases.map((phase) => ({
      name: phase.name,
      perSecond: phase.multiple * capacity.rps,
      seconds: phase.seconds,
    }));
    const plan: OverloadPlan = {
      origin: api.origin,
      targets,
      poll: { apiKey: pollKey, perSecond: 20 },
      phases: phasesSent,
      startAt,
      out,
    };
    const boundaries: { run: number; expired: number }[] = [];
    const apiCpu: number[] = [];
    const apiPid = api.child.process.pid!;
    // the API's CPU and the worker's jobs at each phase's boundaries
    const offsets = [
      0,
      ...options.phases.map((_, i) => options.phases.slice(0, i + 1).reduce((t, p) => t + p.seconds * 1000, 0)),
    ];
    const scrapes = offsets.map(async (offset, i) => {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt + offset - Date.now())));
      apiCpu[i] = processCpuMs(apiPid) ?? 0;
      boundaries[i] = await workerJobs(workerOrigin);
    });
    const env = { ...process.env, OVERLOAD_PLAN: JSON.stringify(plan) };
    const client = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'overload-client.ts')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const code = await new Promise<number | null>((resolve) => client.once('exit', resolve));
    await Promise.all(scrapes);
    if (code !== 0) throw new Error(`the overload client exited with ${code}`);
    // jobs of the last phase still running when it ended
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    boundaries[boundaries.length - 1] = await workerJobs(workerOrigin);

    const records = JSON.parse(fs.readFileSync(out, 'utf8')) as OverloadRecords;
    const phases = options.phases.map((phase, i) =>
      phaseResult(
        phase,
        phase.multiple * capacity.rps,
        records.requests.filter((r) => r[0] === i),
        capacity.rps,
        jobsDelta(boundaries[i]!, boundaries[i + 1]!),
        apiCpu[i + 1]! - apiCpu[i]!,
      ),
    );
    const cpuSplit = apiCpuSplit(phases);
    for (const p of phases)
      options.say(
        `overload ${p.name}: ${p.perSecond} req/s sent, goodput ${p.goodputRatio} x C, shed ${p.shed}, ` +
          `admitted p99 ${p.admittedP99Ms} ms, jobs ${p.jobsRun} (expired ${p.jobsExpired})`,
      );
    const lastOverload = options.phases.map((p) => p.multiple > 1).lastIndexOf(true);
    const after = lastOverload >= 0 && lastOverload + 1 < options.phases.length ? lastOverload + 1 : -1;
    const recovery =
      after < 0
        ? 0
        : recoverySeconds(
            records.requests.filter((r) => r[0] === after),
            options.phases[after]!.seconds,
          );
    const pollTimes = records.polls
      .filter((p) => p[2] === 200)
      .map((p) => p[1])
      .sort((a, b) => a - b);
    const within1s = records.polls.filter((p) => p[2] === 200 && p[1] <= 1_000).length;
    const polls = {
      count: records.polls.length,
      within1sShare: round(within1s / Math.max(1, records.polls.length), 3),
      p50Ms: round(percentile(pollTimes, 50)),
      p99Ms: round(percentile(pollTimes, 99)),
      errors: records.polls.length - pollTimes.length,
    };
    const total = jobsDelta(boundaries[0]!, boundaries[boundaries.length - 1]!);
    const succeeded = phases.reduce((sum, p) => sum + p.ok, 0);
    const applied = {
      failureReports: (await failureCounts(backends.mongoUrl, deployment.db)) - failuresBefore,
      answered200: succeeded,
    };
    const wastedShare = total.run > 0 ? round(Math.max(0, total.run - succeeded) / total.run, 3) : 0;
    options.say(
      `overload: recovery ${recovery} s, wasted ${wastedShare}, applied ` +
        `${applied.failureReports} for ${succeeded} 200s; ` +
        `${cpuSplit ? `API CPU ${cpuSplit.perAdmittedMs} ms per admitted request, ${cpuSplit.perRefusalMs} per refusal` : 'API CPU not split (too few phases)'}`,
    );
    // last: it leaves jobs queued that the worker refuses as expired once it runs again
    // (a probe of the API alone: the stopped worker answers no scrape)
    const alone = await refusalsAlone(
      api.origin,
      deployment.worker.process.pid!,
      report,
      probeOf(backends, [{ role: 'api1', pid: apiPid }]),
    );
    const perAdmittedMs = capacity.cost?.cpuMs.api1 ?? 0;
    const apiCpuApart = {
      perAdmittedMs,
      perRefusalMs: alone.cpuMsPerRefusal,
      refusalShare: perAdmittedMs > 0 ? round(alone.cpuMsPerRefusal / perAdmittedMs) : 0,
      refusals: alone.refusals,
      others: alone.others,
    };
    options.say(
      `overload: apart, API CPU ${perAdmittedMs} ms per admitted request ` +
        `(capacity run), ${alone.cpuMsPerRefusal} per refusal (worker stopped: ` +
        `${alone.refusals} refusals, ${alone.others} others)`,
    );
    return {
      workerConcurrency: WORKER_CONCURRENCY,
      queueWaitTargetMs: QUEUE_WAIT_TARGET_MS,
      capacity,
      phases,
      recoverySeconds: recovery,
      jobsRun: total.run,
      jobsExpired: total.expired,
      wastedShare,
      applied,
      polls,
      ...(cpuSplit ? { apiCpu: cpuSplit } : {}),
      apiCpuApart,
    };
  } finally {
    await deployment.stop();
  }
}
