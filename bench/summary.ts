/**
 * The headline figures as ratios to the floors of the same run, each with its target, and
 * `npm run bench:quick`'s verdict against the committed latest.json. Own CPU: API, worker, Redis.
 */
import { type Cost, cpuOf } from './cost';
import type { LoadResult } from './load';
import type { BenchResults } from './results';
import type { StatusUpdateResult } from './service-load';
import { round } from './statistics';
import type { StreamMemory } from './stream-holders';
import type { StreamsLevel } from './streams';

/** The concurrency of the headline figures (round trips, Redis commands); every concurrency has its targets. */
const HEADLINE_CLIENTS = 16;
const TARGETS = { pollApiCpu: 1.2, mongoPerRequest: 2, rssPerStreamKiB: 16, fanOut: 1.5 };
/**
 * Customer orders priced from a menu against the same without one (API CPU, throughput); a menu's 304
 * against its 200; a publish's bytes per location against a copy of the menu.
 */
export const MENU_TARGETS = { apiCpu: 1.15, rps: 0.9, notModifiedShare: 0.1, copyShare: 0.05 };
/** A feature's targets against the same run without it: total CPU, MongoDB commands, throughput. */
const VARIANT_TARGETS = { totalCpu: 1.5, mongoCommands: 1.5, rps: 0.8 };

/**
 * A status update's targets at a concurrency: own-process CPU and throughput, against the
 * floor (one client: a register alone, where most locations live).
 */
export function statusTargets(clients: number): { ownCpu: number; rps: number } {
  return { ownCpu: 1.3, rps: clients === 1 ? 0.9 : clients >= 64 ? 1.0 : 0.8 };
}

const mongoOf = (cost: Cost | undefined) =>
  round(Object.values(cost?.mongoCommands ?? {}).reduce((sum, n) => sum + n, 0));
const ratioOf = (a: number, b: number) => (b > 0 ? round(a / b) : 0);

/**
 * What one request cost, by process (CPU ms; own: API, worker and Redis), with its commands, throughput and latency.
 */
export type RequestCost = ReturnType<typeof requestCost>;

export function requestCost(run: LoadResult) {
  const apiMs = cpuOf(run.cost, (role) => /^api\d+$/.test(role) || role === 'floor-api');
  const workerMs = cpuOf(run.cost, (role) => role === 'worker' || role === 'floor-worker');
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

/** The service against its floor at one concurrency: each figure's ratio (service / floor). */
function compare(service: LoadResult, floor: LoadResult) {
  const s = requestCost(service);
  const f = requestCost(floor);
  const ratio = Object.fromEntries(
    Object.keys(s).map((k) => [k, ratioOf(s[k as keyof RequestCost], f[k as keyof RequestCost])]),
  ) as RequestCost;
  return { clients: service.concurrency, service: s, floor: f, ratio };
}

/**
 * A feature's status update row: its cost, against the same run without it and against its own floor when it has one.
 */
function variantRow(run: StatusUpdateResult, base: StatusUpdateResult | undefined) {
  const cost = requestCost(run);
  const without = base && requestCost(base);
  const floor = run.floor && requestCost(run.floor);
  const vsWithout = without && {
    totalMs: ratioOf(cost.totalMs, without.totalMs),
    mongoCommands: ratioOf(cost.mongoCommands, without.mongoCommands),
    rps: ratioOf(cost.rps, without.rps),
  };
  const t = VARIANT_TARGETS;
  return {
    clients: run.concurrency,
    ...cost,
    ...(vsWithout
      ? {
          vsWithout,
          met: vsWithout.totalMs <= t.totalCpu && vsWithout.mongoCommands <= t.mongoCommands && vsWithout.rps >= t.rps,
        }
      : {}),
    ...(floor
      ? {
          vsFloor: {
            totalMs: ratioOf(cost.totalMs, floor.totalMs),
            ownMs: ratioOf(cost.ownMs, floor.ownMs),
            rps: ratioOf(cost.rps, floor.rps),
          },
        }
      : {}),
    ...(run.report ? { report: run.report } : {}),
  };
}

/**
 * A memory reading against its target; unreliable when RSS grew less than
 * the heap (pages given back between the readings).
 */
export function memoryVerdict(
  streams: number,
  memory: Pick<StreamMemory, 'rssPerStreamKiB' | 'heapPerStreamKiB'>,
  floors?: StreamsLevel['memoryFloors'],
) {
  const reliable = rssReliable(memory);
  const floor = (server: string) => floors?.find((f) => f.server === server)?.rssPerStreamKiB;
  return {
    streams,
    rssPerStreamKiB: memory.rssPerStreamKiB,
    rssFloorNodeKiB: floor('node'),
    rssFloorKoaKiB: floor('koa'),
    rssTargetKiB: TARGETS.rssPerStreamKiB,
    rssReliable: reliable,
    rssMet: reliable && memory.rssPerStreamKiB <= TARGETS.rssPerStreamKiB,
  };
}
export type StreamMemoryVerdict = ReturnType<typeof memoryVerdict>;

export const rssReliable = (memory: Pick<StreamMemory, 'rssPerStreamKiB' | 'heapPerStreamKiB'>) =>
  memory.rssPerStreamKiB >= memory.heapPerStreamKiB;

export const unjudgedRss = (verdict: { rssReliable?: boolean }): string | undefined =>
  verdict.rssReliable === false
    ? 'unreliable: RSS grew less than the heap (pages given back between readings; a longer BENCH_SETTLE_MS)'
    : undefined;

export type Summary = ReturnType<typeof summarise>;

/** The menu rows against their targets (bench/menu-load.ts). */
function menuSummary(r: BenchResults) {
  const t = MENU_TARGETS;
  const orders = (r.menuOrders ?? []).map((row) => {
    const [menu, without] = [requestCost(row), requestCost(row.withoutMenu)];
    const ratio = { apiMs: ratioOf(menu.apiMs, without.apiMs), rps: ratioOf(menu.rps, without.rps) };
    return {
      clients: row.concurrency,
      menu,
      without,
      ratio,
      errors: row.errors + row.withoutMenu.errors,
      menuDocumentReads: row.menuDocumentReads,
      met: ratio.apiMs <= t.apiCpu && ratio.rps >= t.rps,
    };
  });
  const read = r.menuRead && {
    ...r.menuRead,
    share: ratioOf(r.menuRead.cpuMs304, r.menuRead.cpuMs200),
    oneClientShare: ratioOf(r.menuRead.oneClient.cpuMs304, r.menuRead.oneClient.cpuMs200),
  };
  const publish = r.menuPublish && {
    ...r.menuPublish,
    copyShare: round(r.menuPublish.bytesPerLocation / r.menuPublish.menuBytes, 4),
  };
  return {
    orders,
    ...(read ? { read: { ...read, met: read.share <= t.notModifiedShare } } : {}),
    ...(publish ? { publish: { ...publish, met: publish.copyShare <= t.copyShare } } : {}),
  };
}

export function summarise(r: BenchResults) {
  const statusUpdate = r.statusUpdates.flatMap((update) => {
    if (!update.floor) return [];
    const c = compare(update, update.floor);
    const targets = statusTargets(c.clients);
    return [{ ...c, targets, ownCpuMet: c.ratio.ownMs <= targets.ownCpu, rpsMet: c.ratio.rps >= targets.rps }];
  });
  const poll = r.locationPolls.flatMap((p) => {
    if (!p.floor) return [];
    const c = compare(p, p.floor);
    // Whole commands: a key's session is read again now and then (the session cache's
    // refresh), which is the authentication's, not the poll's read.
    const mongoMet = Math.round(c.service.mongoCommands) <= Math.round(c.floor.mongoCommands) && c.ratio.mongoMs <= 1;
    return [{ ...c, records: p.records, apiCpuMet: c.ratio.apiMs <= TARGETS.pollApiCpu, mongoMet }];
  });
  const update16 = r.statusUpdates.find((s) => s.concurrency === HEADLINE_CLIENTS) ?? r.statusUpdates[0];
  const poll16 = r.locationPolls.find((p) => p.concurrency === HEADLINE_CLIENTS) ?? r.locationPolls[0];
  const basePoll = poll16 && requestCost(poll16);
  const pollFloor = poll16?.floor && requestCost(poll16.floor);
  const variants = r.variants?.map((v) => {
    const pollCost = requestCost(v.poll);
    return {
      name: v.name,
      statusUpdates: v.statusUpdates.map((run) =>
        variantRow(
          run,
          r.statusUpdates.find((s) => s.concurrency === run.concurrency),
        ),
      ),
      poll: {
        ...pollCost,
        apiToFloor: ratioOf(pollCost.apiMs, pollFloor?.apiMs ?? 0),
        addedApiMs: round(pollCost.apiMs - (basePoll?.apiMs ?? 0), 3),
      },
    };
  });
  const [st, chain] = [r.streams, r.chainStreams];
  return {
    statusUpdate,
    ...(r.collections ? { collections: r.collections } : {}),
    poll,
    ...(variants ? { variants } : {}),
    ...(r.presence ? { presence: r.presence } : {}),
    ...(r.menuOrders || r.menuRead || r.menuPublish ? { menus: menuSummary(r) } : {}),
    // (what the service produces at capacity: the best status-update rate, each a failure report's events)
    ...(r.relay
      ? {
          relay: {
            ...r.relay,
            capacityEventsPerSecond: round(
              r.relay.eventsPerReport * Math.max(0, ...r.statusUpdates.map((s) => s.rps)),
              0,
            ),
          },
        }
      : {}),
    mongoRoundTrips: {
      statusUpdate: mongoOf(update16?.cost),
      poll: mongoOf(poll16?.cost),
      target: TARGETS.mongoPerRequest,
    },
    redisCommands: {
      statusUpdate: update16?.cost?.redisCommands ?? 0,
      floorPerJob: update16?.floor?.cost?.redisCommands ?? 0,
      poll: poll16?.cost?.redisCommands ?? 0,
    },
    ...(st
      ? {
          streams: {
            ...memoryVerdict(st.streams, st.memory, st.memoryFloors),
            serverFanOutP50Ms: st.serverFanOutMs.p50,
            floorP50Ms: st.floorMs.p50,
            ratio: st.ratio,
            ratioTarget: TARGETS.fanOut,
            ratioMet: st.ratio > 0 && st.ratio <= TARGETS.fanOut,
          },
        }
      : {}),
    ...(chain
      ? {
          chainStreams: {
            ...memoryVerdict(chain.streams, chain.memory, chain.memoryFloors),
            locations: chain.locations,
            fanOutP50Ms: chain.arrival.p50Ms,
            fanOutP99Ms: chain.arrival.p99Ms,
            missed: chain.arrival.missed,
          },
        }
      : {}),
  };
}

interface Row {
  value: number;
  target?: { limit: number; atMost: boolean };
  /** The reading cannot be judged (said instead of met). */
  unreliable?: string;
}

const MOVED = 0.1;

function rowsOf(summary: Summary): Map<string, Row> {
  const rows = new Map<string, Row>();
  for (const s of summary.statusUpdate) {
    rows.set(`status update, ${s.clients} clients: own CPU / floor`, {
      value: s.ratio.ownMs,
      target: { limit: s.targets.ownCpu, atMost: true },
    });
    rows.set(`status update, ${s.clients} clients: MongoDB CPU / floor`, { value: s.ratio.mongoMs });
    rows.set(`status update, ${s.clients} clients: req/s / floor`, {
      value: s.ratio.rps,
      target: { limit: s.targets.rps, atMost: false },
    });
  }
  for (const m of summary.menus?.orders ?? []) {
    rows.set(`menu orders, ${m.clients} clients: API CPU / without a menu`, {
      value: m.ratio.apiMs,
      target: { limit: MENU_TARGETS.apiCpu, atMost: true },
    });
    rows.set(`menu orders, ${m.clients} clients: orders/s / without a menu`, {
      value: m.ratio.rps,
      target: { limit: MENU_TARGETS.rps, atMost: false },
    });
  }
  const read = summary.menus?.read;
  if (read)
    rows.set(`menu read, ${read.items} items, ${read.concurrency} clients: 304 / 200 API CPU`, {
      value: read.share,
      target: { limit: MENU_TARGETS.notModifiedShare, atMost: true },
    });
  for (const p of summary.poll)
    rows.set(`poll, ${p.records} orders, ${p.clients} clients: API CPU / floor`, {
      value: p.ratio.apiMs,
      target: { limit: TARGETS.pollApiCpu, atMost: true },
    });
  const st = summary.streams;
  // by its count: a quick run's streams are never held against a full run's
  if (st)
    rows.set(`streams, one location, ${st.streams} streams: RSS KiB per stream`, {
      value: st.rssPerStreamKiB,
      target: { limit: st.rssTargetKiB, atMost: true },
      unreliable: unjudgedRss(st),
    });
  return rows;
}

/**
 * `npm run bench:quick`'s table: each figure against its target and the committed run's, flagged past a 10 % move.
 */
export function renderComparison(run: Summary, committed: Summary | undefined): string {
  const before = committed ? rowsOf(committed) : new Map<string, Row>();
  const lines = ['| figure | this run | target | met | committed | moved |', '|---|---|---|---|---|---|'];
  let flagged = 0;
  for (const [figure, row] of rowsOf(run)) {
    const was = before.get(figure)?.value;
    const met = row.target && (row.target.atMost ? row.value <= row.target.limit : row.value >= row.target.limit);
    const moved = was !== undefined && was > 0 ? (row.value - was) / was : undefined;
    const flag = moved !== undefined && Math.abs(moved) > MOVED;
    if (flag) flagged += 1;
    const target = row.target ? `${row.target.atMost ? '≤' : '≥'} ${row.target.limit}` : '';
    const movedCell =
      moved === undefined ? '' : `${moved > 0 ? '+' : ''}${Math.round(moved * 100)} %${flag ? ' ⚑' : ''}`;
    lines.push(
      '| ' +
        `${[figure, row.value, target, row.unreliable ?? (met === undefined ? '' : met ? 'yes' : 'NO'), was ?? '–', movedCell].join(' | ')} ` +
        '|',
    );
  }
  lines.push(
    '',
    `${flagged} figure(s) moved more than ${MOVED * 100} % from the committed ` +
      `latest.json${committed ? '' : ' (none committed: nothing to compare)'}.`,
  );
  return lines.join('\n');
}
