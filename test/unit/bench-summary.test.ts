/**
 * The bench's summary judges the service against its floors (issue 25): ratios service / floor
 * per process and in total, and each target met or not. Figures here are made up; no timing.
 */
import type { Cost } from '../../bench/cost';
import type { LoadResult } from '../../bench/load';
import type { BenchResults } from '../../bench/results';
import { renderComparison, rssReliable, summarise } from '../../bench/summary';

const cost = (cpuMs: Record<string, number>, mongo: Record<string, number>, redis = 0): Cost => ({
  ops: 1000,
  cpuMs,
  mongoCommands: mongo,
  redisCommands: redis,
  redisByCommand: {},
  redisUsec: 0,
});

const run = (concurrency: number, rps: number, c: Cost): LoadResult => ({
  concurrency,
  ops: 1000,
  errors: 0,
  seconds: 1,
  rps,
  p50Ms: 1,
  p99Ms: 2,
  maxMs: 3,
  errorSamples: [],
  cost: c,
});

function results(
  update: { service: Cost; floor: Cost; rps: [number, number]; clients?: number },
  poll: { service: Cost; floor: Cost },
): BenchResults {
  const clients = update.clients ?? 16;
  return {
    statusUpdates: [
      {
        ...run(clients, update.rps[0], update.service),

        locations: 16,
        redisCpu: [],
        floor: run(clients, update.rps[1], update.floor),
      },
    ],
    locationPolls: [{ ...run(16, 100, poll.service), records: 10, floor: run(16, 100, poll.floor) }],
  } as unknown as BenchResults;
}

const floorUpdate = cost({ 'floor-api': 0.3, 'floor-worker': 0.5, redis: 0.1, mongo: 0.1 }, { 'floor-worker': 2 }, 44);
const floorPoll = cost({ 'floor-api': 1, redis: 0, mongo: 0.4 }, { 'floor-api': 1 });

describe('bench summary against the floors', () => {
  test("a status update within 1.3× the floor in its own processes' CPU (API, worker, Redis) and at 0.8× its throughput meets both targets", () => {
    const service = cost({ api1: 0.4, worker: 0.6, redis: 0.1, mongo: 0.1 }, { api1: 0, worker: 2 }, 46);
    const [u] = summarise(
      results({ service, floor: floorUpdate, rps: [800, 1000] }, { service: floorPoll, floor: floorPoll }),
    ).statusUpdate;
    expect(u).toMatchObject({ clients: 16, targets: { ownCpu: 1.3, rps: 0.8 }, ownCpuMet: true, rpsMet: true });
    expect(u!.service.ownMs).toBeCloseTo(1.1);
    expect(u!.floor.ownMs).toBeCloseTo(0.9);
    expect(u!.service.totalMs).toBeCloseTo(1.2);
    expect(u!.ratio).toMatchObject({
      ownMs: 1.22,
      totalMs: 1.2,
      apiMs: 1.33,
      workerMs: 1.2,
      mongoCommands: 1,
      rps: 0.8,
    });
  });

  test("a status update beyond 1.3× in its own processes' CPU, or below 0.8× in throughput, does not; MongoDB's share neither hides nor adds to it", () => {
    const service = cost({ api1: 0.6, worker: 0.7, redis: 0.1, mongo: 0.1 }, { worker: 2 });
    const [u] = summarise(
      results({ service, floor: floorUpdate, rps: [700, 1000] }, { service: floorPoll, floor: floorPoll }),
    ).statusUpdate;
    expect(u).toMatchObject({ ownCpuMet: false, rpsMet: false });
    expect(u!.ratio.ownMs).toBe(1.56);
    // the same processes next to a much slower MongoDB on both sides: the total ratio falls, the own ratio does not
    const slowMongo = (c: Cost, ms: number) => ({ ...c, cpuMs: { ...c.cpuMs, mongo: ms } });
    const [v] = summarise(
      results(
        { service: slowMongo(service, 5), floor: slowMongo(floorUpdate, 5), rps: [700, 1000] },
        { service: floorPoll, floor: floorPoll },
      ),
    ).statusUpdate;
    expect(v!.ratio.totalMs).toBeLessThan(1.1);
    expect(v).toMatchObject({ ownCpuMet: false, ratio: { ownMs: 1.56 } });
  });

  test('a status update is judged at each concurrency by its own targets: 0.9× throughput at one client, at least the floor at 64', () => {
    const service = cost({ api1: 0.4, worker: 0.6, redis: 0.1, mongo: 0.1 }, { worker: 2 });
    const [one] = summarise(
      results({ service, floor: floorUpdate, rps: [850, 1000], clients: 1 }, { service: floorPoll, floor: floorPoll }),
    ).statusUpdate;
    expect(one).toMatchObject({ targets: { ownCpu: 1.3, rps: 0.9 }, ownCpuMet: true, rpsMet: false });
    const [many] = summarise(
      results({ service, floor: floorUpdate, rps: [950, 1000], clients: 64 }, { service: floorPoll, floor: floorPoll }),
    ).statusUpdate;
    expect(many).toMatchObject({ targets: { ownCpu: 1.3, rps: 1.0 }, ownCpuMet: true, rpsMet: false });
    const [slow] = summarise(
      results(
        {
          service: cost({ api1: 0.6, worker: 0.7, redis: 0.1, mongo: 0.1 }, { worker: 2 }),
          floor: floorUpdate,
          rps: [950, 1000],
          clients: 1,
        },
        { service: floorPoll, floor: floorPoll },
      ),
    ).statusUpdate;
    expect(slow).toMatchObject({ ownCpuMet: false, rpsMet: true });
  });

  test('a poll meets its targets with API CPU within 1.2× and no more MongoDB work than the floor', () => {
    const within = cost({ api1: 1.2, redis: 0, mongo: 0.4 }, { api1: 1 });
    const [p] = summarise(
      results({ service: floorUpdate, floor: floorUpdate, rps: [1, 1] }, { service: within, floor: floorPoll }),
    ).poll;
    expect(p).toMatchObject({ records: 10, apiCpuMet: true, mongoMet: true });

    const moreMongo = cost({ api1: 1.1, redis: 0, mongo: 0.4 }, { api1: 2 });
    const [q] = summarise(
      results({ service: floorUpdate, floor: floorUpdate, rps: [1, 1] }, { service: moreMongo, floor: floorPoll }),
    ).poll;
    expect(q).toMatchObject({ apiCpuMet: true, mongoMet: false });

    // a session read again now and then is the authentication's, not more work for the poll
    const sessionRefresh = cost({ api1: 1.1, redis: 0, mongo: 0.4 }, { api1: 1.02 });
    const [r] = summarise(
      results({ service: floorUpdate, floor: floorUpdate, rps: [1, 1] }, { service: sessionRefresh, floor: floorPoll }),
    ).poll;
    expect(r).toMatchObject({ mongoMet: true });
  });
});

describe('bench:quick against the committed results', () => {
  const summaryWith = (workerMs: number, pollApiMs: number) =>
    summarise(
      results(
        {
          service: cost({ api1: 0.4, worker: workerMs, redis: 0.1, mongo: 5 }, { worker: 2 }),
          floor: floorUpdate,
          rps: [800, 1000],
        },
        { service: cost({ api1: pollApiMs, redis: 0, mongo: 0.4 }, { api1: 1 }), floor: floorPoll },
      ),
    );
  const lineOf = (table: string, figure: string) => table.split('\n').find((line) => line.startsWith(`| ${figure} |`))!;

  test("judges the service's own processes (API, worker, Redis) against the floor's, MongoDB apart", () => {
    const [u] = summaryWith(0.6, 1).statusUpdate;
    expect(u!.ratio.ownMs).toBe(1.22); // (0.4 + 0.6 + 0.1) / (0.3 + 0.5 + 0.1), whatever MongoDB cost
    const table = renderComparison(summaryWith(0.6, 1), undefined);
    expect(lineOf(table, 'status update, 16 clients: own CPU / floor')).toBe(
      '| status update, 16 clients: own CPU / floor | 1.22 | ≤ 1.3 | yes | – |  |',
    );
  });

  test('flags a figure that moved more than 10 % from the committed one, and only that', () => {
    const table = renderComparison(summaryWith(0.9, 1.05), summaryWith(0.6, 1));
    expect(lineOf(table, 'status update, 16 clients: own CPU / floor')).toBe(
      '| status update, 16 clients: own CPU / floor | 1.56 | ≤ 1.3 | NO | 1.22 | +28 % ⚑ |',
    );
    expect(lineOf(table, 'poll, 10 orders, 16 clients: API CPU / floor')).toBe(
      '| poll, 10 orders, 16 clients: API CPU / floor | 1.05 | ≤ 1.2 | yes | 1 | +5 % |',
    );
    expect(table).toContain('1 figure(s) moved more than 10 %');
  });

  test('calls a stream memory reading unreliable, not met, when RSS grew less than the heap the streams use', () => {
    expect(rssReliable({ rssPerStreamKiB: -2.6, heapPerStreamKiB: 12 })).toBe(false);
    expect(rssReliable({ rssPerStreamKiB: 16.6, heapPerStreamKiB: 11.1 })).toBe(true);
    const streams = (rssPerStreamKiB: number, rssReliable: boolean) => ({
      streams: 2000,
      rssPerStreamKiB,
      rssFloorNodeKiB: undefined,
      rssFloorKoaKiB: undefined,
      rssTargetKiB: 16,
      rssReliable,
      rssMet: rssReliable && rssPerStreamKiB <= 16,
      serverFanOutP50Ms: 40,
      floorP50Ms: 30,
      ratio: 1.33,
      ratioTarget: 1.5,
      ratioMet: true,
    });
    const figure = 'streams, one location, 2000 streams: RSS KiB per stream';
    const returned = renderComparison({ ...summaryWith(0.6, 1), streams: streams(-2.6, false) }, undefined);
    expect(lineOf(returned, figure)).toMatch(
      /^\| streams, one location, 2000 streams: RSS KiB per stream \| -2\.6 \| ≤ 16 \| unreliable: /,
    );
    const held = renderComparison({ ...summaryWith(0.6, 1), streams: streams(14, true) }, undefined);
    expect(lineOf(held, figure)).toBe(
      '| streams, one location, 2000 streams: RSS KiB per stream | 14 | ≤ 16 | yes | – |  |',
    );
    // a full run's 10,000 streams are not what a quick run's 2,000 are compared with
    const full = { ...summaryWith(0.6, 1), streams: { ...streams(13.8, true), streams: 10_000 } };
    expect(lineOf(renderComparison({ ...summaryWith(0.6, 1), streams: streams(30.9, true) }, full), figure)).toBe(
      '| streams, one location, 2000 streams: RSS KiB per stream | 30.9 | ≤ 16 | NO | – |  |',
    );
    expect(lineOf(renderComparison(full, full), 'streams, one location, 10000 streams: RSS KiB per stream')).toBe(
      '| streams, one location, 10000 streams: RSS KiB per stream | 13.8 | ≤ 16 | yes | 13.8 | 0 % |',
    );
  });
});
