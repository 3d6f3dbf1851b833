/**
 * The headline figures of the service's own cost, as ratios to the ceilings measured in the same
 * run (issue 11's targets): CPU per poll and per status update, MongoDB round trips per request,
 * Redis commands per request, and (when the run has the 10,000-stream level) memory per stream and
 * fan-out against its floor.
 */
import type { Cost } from './cost';
import { cpuOf } from './cost';
import type { BenchResults, Summary, Target } from './results';
import { round } from './statistics';
import { summariseStreams } from './streams';

function target(value: number, ceiling: number, allowed: number): Target {
  const ratio = ceiling > 0 ? round(value / ceiling) : 0;
  return { value: round(value, 3), ceiling: round(ceiling, 3), ratio, target: allowed, met: ceiling > 0 && ratio <= allowed };
}

const mongoOf = (cost: Cost | undefined) => round(Object.values(cost?.mongoCommands ?? {}).reduce((sum, n) => sum + n, 0));
const isApi = (role: string) => /^api\d+$/.test(role);

export function summarise(r: BenchResults): Summary {
  const ceilings = r.ceilings;
  const pollCpu = r.locationPolls.map((poll) => {
    const koa = ceilings.koaPayload.find((k) => k.records === poll.records);
    return { records: poll.records, clients: poll.concurrency, ...target(cpuOf(poll.cost, isApi), cpuOf(koa?.cost, (p) => p === 'koa'), 5) };
  });
  const statusUpdateCpu = r.statusUpdates.map((update) => {
    const koa = ceilings.koa.find((k) => k.concurrency === update.concurrency);
    const bull = ceilings.bullmq.find((b) => b.concurrency === update.concurrency);
    const apiMs = cpuOf(update.cost, isApi);
    const workerMs = cpuOf(update.cost, (p) => p === 'worker');
    const koaMs = cpuOf(koa?.cost, (p) => p === 'koa');
    const producerMs = cpuOf(bull?.cost, (p) => p === 'producer');
    const echoWorkerMs = cpuOf(bull?.cost, (p) => p === 'echo-worker');
    return { clients: update.concurrency, apiMs, workerMs, koaMs, producerMs, echoWorkerMs, ...target(apiMs + workerMs, koaMs + producerMs + echoWorkerMs, 2) };
  });
  const headline = <T extends { concurrency: number }>(list: T[], c: number) => list.find((x) => x.concurrency === c) ?? list[0];
  const update16 = headline(r.statusUpdates, 16);
  const poll = r.locationPolls[0];
  const mongo = { statusUpdate: mongoOf(update16?.cost), poll: mongoOf(poll?.cost), target: 2 };
  return {
    pollCpu,
    statusUpdateCpu,
    mongoRoundTrips: { ...mongo, met: mongo.statusUpdate <= 2 && mongo.poll <= 2 },
    redisCommands: {
      statusUpdate: update16?.cost?.redisCommands ?? 0,
      bullmqCeilingPerJob: headline(ceilings.bullmq, 16)?.cost?.redisCommands ?? 0,
      poll: poll?.cost?.redisCommands ?? 0,
    },
    ...(r.streams ? { streams: summariseStreams(r.streams) } : {}),
  };
}
