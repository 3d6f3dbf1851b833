/**
 * The headline figures of the service's own cost, as ratios to its floors measured in the same
 * run (issue 25's targets): per request, each process's CPU and the total, MongoDB and Redis
 * commands, throughput and latency; and (when the run has the streams levels) memory per stream
 * and fan-out against its floor.
 */
import type { Cost } from './cost';
import { cpuOf } from './cost';
import type { LoadResult } from './load';
import type { BenchResults } from './results';
import type { PollResult, StatusUpdateResult } from './service-load';
import { round } from './statistics';
import { memoryVerdict, summariseStreams } from './streams';

/** The concurrency of the headline figures (round trips, variants); every concurrency has its targets. */
const HEADLINE_CLIENTS = 16;
const TARGETS = { pollApiCpu: 1.2, pollMongo: 1 };

/** A status update's targets at a concurrency: own-process CPU (API, worker, Redis) and throughput, against the floor. */
export function statusTargets(clients: number): { ownCpu: number; rps: number } {
  return { ownCpu: clients === 1 ? 1.5 : 1.3, rps: clients >= 64 ? 1.0 : 0.8 };
}

const mongoOf = (cost: Cost | undefined) => round(Object.values(cost?.mongoCommands ?? {}).reduce((sum, n) => sum + n, 0));
const isApi = (role: string) => /^api\d+$/.test(role) || role === 'floor-api';
const isWorker = (role: string) => role === 'worker' || role === 'floor-worker';

/** What one request cost, by process (CPU ms from /proc; own: API, worker and Redis, MongoDB apart), with its commands, throughput and latency. */
export type RequestCost = ReturnType<typeof requestCost>;
/** The service against its floor at one concurrency: each figure's ratio (service / floor). */
export type FloorComparison = ReturnType<typeof compare>;

export function requestCost(run: LoadResult) {
  const apiMs = cpuOf(run.cost, isApi);
  const workerMs = cpuOf(run.cost, isWorker);
  const redisMs = cpuOf(run.cost, (role) => role === 'redis');
  const mongoMs = cpuOf(run.cost, (role) => role === 'mongo');
  return {
    apiMs,
    workerMs,
    redisMs,
    mongoMs,
    totalMs: round(apiMs + workerMs + redisMs + mongoMs, 3),
    ownMs: round(apiMs + workerMs + redisMs, 3),
    mongoCommands: mongoOf(run.cost),
    redisCommands: run.cost?.redisCommands ?? 0,
    rps: run.rps,
    p50Ms: run.p50Ms,
    p99Ms: run.p99Ms,
  };
}

const ratioOf = (a: number, b: number) => (b > 0 ? round(a / b) : 0);

function compare(service: LoadResult, floor: LoadResult) {
  const s = requestCost(service);
  const f = requestCost(floor);
  const ratio = Object.fromEntries(Object.keys(s).map((k) => [k, ratioOf(s[k as keyof RequestCost], f[k as keyof RequestCost])])) as RequestCost;
  return { clients: service.concurrency, service: s, floor: f, ratio };
}

/** A feature's targets at any concurrency, against the same run without it: total CPU, MongoDB commands, throughput. */
const VARIANT_TARGETS = { totalCpu: 1.5, mongoCommands: 1.5, rps: 0.8 };

/**
 * A feature's status update row at one concurrency: its cost, its ratios to the same run without
 * the feature (`without`, with VARIANT_TARGETS) and to its own floor when it has one, and what it
 * reported of its work (deliveries).
 */
function variantRow(run: StatusUpdateResult, base: StatusUpdateResult | undefined) {
  const cost = requestCost(run);
  const without = base && requestCost(base);
  const floor = run.floor && requestCost(run.floor);
  const vsWithout = without && { totalMs: ratioOf(cost.totalMs, without.totalMs), mongoCommands: ratioOf(cost.mongoCommands, without.mongoCommands), rps: ratioOf(cost.rps, without.rps) };
  return {
    clients: run.concurrency,
    ...cost,
    ...(vsWithout
      ? { vsWithout, targets: VARIANT_TARGETS, met: vsWithout.totalMs <= VARIANT_TARGETS.totalCpu && vsWithout.mongoCommands <= VARIANT_TARGETS.mongoCommands && vsWithout.rps >= VARIANT_TARGETS.rps }
      : {}),
    ...(floor ? { vsFloor: { totalMs: ratioOf(cost.totalMs, floor.totalMs), ownMs: ratioOf(cost.ownMs, floor.ownMs), rps: ratioOf(cost.rps, floor.rps) } } : {}),
    ...(run.report ? { report: run.report } : {}),
  };
}

/** A feature's poll row: its cost, its API CPU over the plain poll floor's, and what it adds to the poll without it. */
function withPollFloor(poll: RequestCost, plain: PollResult | undefined, without: RequestCost | undefined) {
  const floor = plain?.floor && requestCost(plain.floor);
  return { ...poll, apiToFloor: ratioOf(poll.apiMs, floor?.apiMs ?? 0), addedApiMs: round(poll.apiMs - (without?.apiMs ?? 0), 3) };
}

/**
 * Status updates against their floor at each concurrency (targets: statusTargets); polls against
 * theirs (API CPU at most 1.2 times, no more MongoDB work); each feature's cost row at 16 clients;
 * MongoDB commands per request (at most 2); Redis commands beside the floor's; the streams levels.
 */
/** The headline figures and ratios, computed from a run's figures. */
export type Summary = ReturnType<typeof summarise>;

export function summarise(r: BenchResults) {
  const statusUpdate = r.statusUpdates.flatMap((update) => {
    if (!update.floor) return [];
    const c = compare(update, update.floor);
    const targets = statusTargets(c.clients);
    return [{ ...c, targets, ownCpuMet: (c.ratio.ownMs ?? 0) <= targets.ownCpu, rpsMet: c.ratio.rps >= targets.rps }];
  });
  const poll = r.locationPolls.flatMap((p) => {
    if (!p.floor) return [];
    const c = compare(p, p.floor);
    return [
      {
        ...c,
        records: p.records,
        targets: { apiCpu: TARGETS.pollApiCpu, mongo: TARGETS.pollMongo },
        apiCpuMet: c.ratio.apiMs <= TARGETS.pollApiCpu,
        // Whole commands: a key's session is read again now and then (the session cache's refresh), which is the authentication's, not the poll's read.
        mongoMet: Math.round(c.service.mongoCommands) <= Math.round(c.floor.mongoCommands) && c.ratio.mongoMs <= TARGETS.pollMongo,
      },
    ];
  });
  const headline = <T extends { concurrency: number }>(list: T[], c: number) => list.find((x) => x.concurrency === c) ?? list[0];
  const update16 = headline(r.statusUpdates, HEADLINE_CLIENTS);
  const poll16 = r.locationPolls.find((p) => p.concurrency === HEADLINE_CLIENTS) ?? r.locationPolls[0];
  const mongo = { statusUpdate: mongoOf(update16?.cost), poll: mongoOf(poll16?.cost), target: 2 };
  const basePoll = poll16 && requestCost(poll16);
  const variants = r.variants?.map((v) => ({
    name: v.name,
    statusUpdates: (v.statusUpdates ?? (v.statusUpdate ? [v.statusUpdate] : [])).map((run) => variantRow(run, r.statusUpdates.find((s) => s.concurrency === run.concurrency))),
    poll: withPollFloor(requestCost(v.poll), poll16, basePoll),
  }));
  return {
    statusUpdate,
    ...(r.collections ? { collections: r.collections } : {}),
    poll,
    ...(variants ? { variants } : {}),
    ...(r.presence ? { presence: r.presence } : {}),
    mongoRoundTrips: { ...mongo, met: mongo.statusUpdate <= 2 && mongo.poll <= 2 },
    redisCommands: {
      statusUpdate: update16?.cost?.redisCommands ?? 0,
      floorPerJob: update16?.floor?.cost?.redisCommands ?? 0,
      poll: poll16?.cost?.redisCommands ?? 0,
    },
    ...(r.streams ? { streams: summariseStreams(r.streams) } : {}),
    ...(r.chainStreams
      ? {
          chainStreams: {
            ...memoryVerdict(r.chainStreams.streams, r.chainStreams.memory, r.chainStreams.memoryFloors),
            locations: r.chainStreams.locations,
            fanOutP50Ms: r.chainStreams.arrival.p50Ms,
            fanOutP99Ms: r.chainStreams.arrival.p99Ms,
            missed: r.chainStreams.arrival.missed,
          },
        }
      : {}),
  };
}
