/** The benchmark's printed tables: the terminal's, and docs/benchmarks.md's (scripts/docs/benchmarks.ts). */
import type { ArchiveScenario } from './archive-load';
import type { OverloadScenario } from './overload';
import { type Cost, formatCpu } from './cost';
import type { BenchResults, ClusterResults } from './results';
import type { StatusUpdateResult } from './service-load';
import type { ChainStreamsLevel, FanOutLevel, StreamsLevel } from './streams';
import {
  MENU_TARGETS,
  type RequestCost,
  type StreamMemoryVerdict,
  summarise,
  type Summary,
  unjudgedRss,
} from './summary';

export type { BenchResults } from './results';

const ratio = (a: number, b: number, digits = 2) => (b > 0 ? Math.round((a / b) * 10 ** digits) / 10 ** digits : 0);
const table = (headers: string[], rows: (string | number)[][]) =>
  [
    `| ${headers.join(' | ')} |`,
    `|${headers.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

/** Markdown tables, readable in a terminal and pasteable into the README. */
export function renderTables(r: BenchResults): string {
  const m = r.machine;
  const out = [
    `Machine: ${m.nproc} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ` +
      `${m.node}, ${m.os}; Redis ${m.redis}; MongoDB: ${m.mongo}. ` +
      `Everything (load generator, 2 API nodes, worker, Redis, MongoDB) on this machine, over loopback. ` +
      `${r.settings.secondsPerRun} s or ${r.settings.maxOpsPerRun} operations per run after ` +
      `${r.settings.warmupOps} warm-up operations; run took ${r.durationSeconds} s. ` +
      `Load average (1/5/15 min) ${m.loadAverageStart.join(' ')} at the ` +
      `start, ${m.loadAverageEnd?.join(' ') ?? '?'} at the end.`,
    '',
    renderSummary(summarise(r)),
  ];
  const errors = [...r.statusUpdates, ...r.locationPolls]
    .flatMap((run) => [run, ...(run.floor ? [run.floor] : [])])
    .reduce((sum, run) => sum + run.errors, 0);
  out.push('', `Errors over every status update and poll run, the floors' included: ${errors}.`);
  // The floor's status update at one client is the same hops (HTTP, queue,
  // worker, MongoDB, pub/sub) with nothing of the service's.
  const hop = r.statusUpdates.find((s) => s.concurrency === 1)?.floor?.p50Ms ?? 0;
  const fanOut = r.fanOut.map((f) => [
    f.streams,
    f.submissions,
    f.p50Ms,
    f.p99Ms,
    f.maxMs,
    f.lastP50Ms,
    f.missed,
    ratio(f.p50Ms, hop, 1),
  ]);
  out.push(
    '',
    '**Stream fan-out** (customer submit to arrival on every open stream, streams split over 2 API ' +
      `nodes), against the floor's status update at one client (the same hops, p50 ${hop} ms).`,
    '',
  );
  out.push(
    table(
      ['open streams', 'submissions', 'p50 ms', 'p99 ms', 'max ms', 'last stream p50 ms', 'missed', 'p50 / floor'],
      fanOut,
    ),
  );
  if (r.streams) out.push('', renderStreams(r.streams));
  if (r.chainStreams) out.push('', renderChainStreams(r.chainStreams));
  if (r.archive) out.push('', renderArchive(r.archive));
  const menus = summarise(r).menus;
  if (menus) out.push('', renderMenus(menus));
  if (r.overload) out.push('', renderOverload(r.overload));
  out.push(
    '',
    '**Cost per operation** (CPU ms per request, job or submission by process, from /proc; MongoDB commands the ' +
      'service processes sent; Redis commands from INFO commandstats, commands run by scripts included)',
    '',
    costTable(costRows(r)),
  );
  if (r.cluster) out.push('', renderClusterTable(r.cluster, r));
  return out.join('\n');
}

/** Every measured run that has a cost, named as in the tables above. */
function costRows(r: BenchResults): [string, number, Cost | undefined][] {
  const runs = (
    name: string,
    list: { concurrency: number; cost?: Cost; floor?: { cost?: Cost } }[],
  ): [string, number, Cost | undefined][] =>
    list.flatMap((run) => [
      [name, run.concurrency, run.cost],
      [name.replace(/(,|$)/, ' floor$1'), run.concurrency, run.floor?.cost],
    ]);
  return [
    ...runs('status update', r.statusUpdates),
    ...(r.variants ?? []).flatMap((v) => runs(`status update, ${v.name} on`, v.statusUpdates)),
    ...r.locationPolls.flatMap((p) => runs(`poll, ${p.records} orders`, [p])),
    ...(r.variants ?? []).map((v): [string, number, Cost | undefined] => [
      `poll, ${v.poll.records} orders, ${v.name} on`,
      v.poll.concurrency,
      v.poll.cost,
    ]),
    ...(r.menuOrders ?? []).flatMap((m): [string, number, Cost | undefined][] => [
      ['customer order, menu of 2,000 items', m.concurrency, m.cost],
      ['customer order, no menu', m.concurrency, m.withoutMenu.cost],
    ]),
    ...r.fanOut.map((f): [string, number, Cost | undefined] => [`fan-out submission, ${f.streams} streams`, 1, f.cost]),
    ...(r.streams
      ? [
          [`fan-out submission, ${r.streams.streams} streams, 1 node`, 1, r.streams.cost] as [
            string,
            number,
            Cost | undefined,
          ],
        ]
      : []),
    ...(r.chainStreams
      ? [
          [
            `order created, ${r.chainStreams.streams} streams over ${r.chainStreams.locations} locations`,
            r.chainStreams.concurrency,
            r.chainStreams.cost,
          ] as [string, number, Cost | undefined],
        ]
      : []),
  ];
}

const ROLE_ORDER = ['api1', 'api2', 'worker', 'floor-api', 'floor-worker', 'redis', 'mongo'];

function costTable(rows: [string, number, Cost | undefined][]): string {
  const roles = ROLE_ORDER.filter((role) => rows.some(([, , cost]) => cost && role in cost.cpuMs));
  const dash = (value: number | undefined) => (value === undefined ? '' : value);
  const cells = rows.flatMap(([name, clients, cost]) => {
    if (!cost) return [];
    const mongo = cost.mongoCommands;
    const apis = Object.entries(mongo)
      .filter(([role]) => /^(floor-)?api/.test(role))
      .reduce((sum, [, n]) => sum + n, 0);
    const mongoCell =
      Object.keys(mongo).length === 0
        ? ''
        : `${Math.round(apis * 100) / 100} / ${dash(mongo.worker ?? mongo['floor-worker'])}`;
    return [
      [name, clients, ...roles.map((role) => dash(cost.cpuMs[role])), mongoCell, cost.redisCommands, cost.redisUsec],
    ];
  });
  return table(
    [
      'run',
      'clients',
      ...roles.map((role) => `${role} CPU ms`),
      'MongoDB cmds (API / worker)',
      'Redis cmds',
      'Redis µs',
    ],
    cells,
  );
}

/** A streams level's memory per open stream, beside the bare servers holding as many. */
function memoryLine(
  m: StreamsLevel['memory'],
  streams: number,
  floors: StreamsLevel['memoryFloors'] | undefined,
): string {
  const floor = (f: StreamsLevel['memoryFloors'][number]) =>
    `${f.server === 'node' ? "Node's http alone" : 'through Koa'} ` +
    `${f.rssPerStreamKiB} KiB RSS, ${f.heapPerStreamKiB} KiB heap`;
  return (
    `Memory per open stream: ${m.rssPerStreamKiB} KiB RSS, ${m.heapPerStreamKiB} KiB heap used, ` +
    `${m.heapTotalPerStreamKiB} KiB heap reserved, ${m.externalPerStreamKiB} KiB external ` +
    `(after a full GC; ${m.baselineStreams} → ${streams} streams: RSS ${m.rssBeforeMiB} → ` +
    `${m.rssAfterMiB} MiB, heap ${m.heapBeforeMiB} → ${m.heapAfterMiB} MiB).` +
    (floors?.length
      ? ' Floors, bare servers holding as many stream responses open, ' +
        `measured the same way: ${floors.map(floor).join('; ')}.`
      : '')
  );
}

function renderStreams(s: StreamsLevel): string {
  const arrivals = (a: StreamsLevel['arrival']) => `${a.p50Ms} / ${a.p99Ms} / ${a.lastP50Ms}`;
  return [
    `**${s.streams} streams on one API node** (held by ${s.clientProcesses} client ` +
      `processes over raw sockets; ${s.events} events of ${s.frameBytes} bytes)`,
    '',
    table(
      ['figure', 'service', 'floor', 'ratio'],
      [
        [
          `fan-out, worker publish to the node's last write (pos_fanout_seconds), p50 / max ms`,
          `${s.serverFanOutMs.p50} / ${s.serverFanOutMs.max}`,
          `${s.floorMs.p50} / ${s.floorMs.max}`,
          s.ratio,
        ],
        [
          'arrival at the clients (service: from the submit request; floor: from its loop), p50 / p99 / last p50 ms',
          arrivals(s.arrival),
          arrivals(s.floorArrival),
          '',
        ],
        ['streams that missed an event', s.arrival.missed, s.floorArrival.missed, ''],
      ],
    ),
    '',
    memoryLine(s.memory, s.streams, s.memoryFloors),
  ].join('\n');
}

function renderChainStreams(c: ChainStreamsLevel): string {
  return [
    `**${c.streams} streams over ${c.locations} locations on one API node** (a chain: two register streams per ` +
      `location, each location its own key; held by ${c.clientProcesses} client processes over raw sockets)`,
    '',
    memoryLine(c.memory, c.streams, c.memoryFloors),
    `Fan-out while ${c.events} orders are created across the chain, ${c.concurrency} at a time (admin ` +
      `create request to arrival on each of the location's streams): p50 ${c.arrival.p50Ms} ms, p99 ` +
      `${c.arrival.p99Ms} ms, max ${c.arrival.maxMs} ms; ${c.arrival.missed} arrivals missed.`,
  ].join('\n');
}

function renderSummary(s: Summary): string {
  const out: string[] = [
    '**Summary: the service against its floor, per request (same run; ratio = service / floor)**',
    '',
  ];
  const mark = (met: boolean) => (met ? 'met' : 'not met');
  const cells = (c: { service: RequestCost; floor: RequestCost; ratio: RequestCost }, keys: (keyof RequestCost)[]) =>
    keys.map((k) => `${c.service[k]} / ${c.floor[k]} (${c.ratio[k]})`);
  if (s.statusUpdate.length > 0) {
    const c = s.collections;
    if (c)
      out.push(
        `Collections: ${c.statusOrders} orders over ${c.locations} locations for the status ` +
          `updates, ${c.pollOrders.join(' or ')} PLACED orders for the polls, the event log at its ` +
          `newest ${c.eventLogKept} events; ${c.note}. Targets are of the service's own processes ` +
          "(API, worker, Redis); MongoDB's share stands apart.",
        '',
      );
    out.push(
      table(
        [
          'status update, clients',
          'API CPU ms',
          'worker CPU ms',
          'Redis CPU ms',
          'own CPU ms (API + worker + Redis)',
          'MongoDB CPU ms (apart)',
          'total CPU ms',
          'MongoDB cmds',
          'Redis cmds',
          'req/s',
          'p50 ms',
          'p99 ms',
          'own CPU target',
          'req/s target',
        ],
        s.statusUpdate.map((u) => [
          u.clients,
          ...cells(u, [
            'apiMs',
            'workerMs',
            'redisMs',
            'ownMs',
            'mongoMs',
            'totalMs',
            'mongoCommands',
            'redisCommands',
            'rps',
            'p50Ms',
            'p99Ms',
          ]),
          `≤ ${u.targets.ownCpu}×: ${mark(u.ownCpuMet)}`,
          `≥ ${u.targets.rps}×: ${mark(u.rpsMet)}`,
        ]),
      ),
      '',
    );
  }
  if (s.poll.length > 0) {
    out.push(
      table(
        [
          'poll, orders, clients',
          'API CPU ms',
          'MongoDB CPU ms',
          'MongoDB cmds',
          'total CPU ms',
          'req/s',
          'p50 ms',
          'p99 ms',
          'API CPU ≤ 1.2×',
          'MongoDB work ≤ floor',
        ],
        s.poll.map((p) => [
          `${p.records}, ${p.clients}`,
          ...cells(p, ['apiMs', 'mongoMs', 'mongoCommands', 'totalMs', 'rps', 'p50Ms', 'p99Ms']),
          mark(p.apiCpuMet),
          mark(p.mongoMet),
        ]),
      ),
      '',
    );
    out.push(
      'Each cell: service / floor (ratio). Each concurrency is judged by its own targets (the last two columns).',
      '',
    );
  }
  if (s.variants?.length) {
    const times = (x: number | undefined) => (x === undefined ? '–' : `${x}×`);
    out.push(
      table(
        [
          'feature on, clients',
          'total CPU ms (× without it; × its floor)',
          'MongoDB cmds (× without)',
          'req/s (× without)',
          'targets (≤ 1.5×, ≤ 1.5×, ≥ 0.8×)',
          'its work',
        ],
        s.variants.flatMap((v) =>
          v.statusUpdates.map((u) => [
            `${v.name}, ${u.clients}`,
            `${u.totalMs} (${times(u.vsWithout?.totalMs)}; ${times(u.vsFloor?.totalMs)})`,
            `${u.mongoCommands} (${times(u.vsWithout?.mongoCommands)})`,
            `${u.rps} (${times(u.vsWithout?.rps)})`,
            u.met === undefined ? '' : u.met ? 'met' : 'not met',
            u.report
              ? Object.entries(u.report)
                  .map(([k, n]) => `${k} ${n}`)
                  .join(', ')
              : '',
          ]),
        ),
      ),
      '',
      table(
        ['feature on', 'poll API CPU ms (× floor, added)', 'poll req/s'],
        s.variants.map((v) => [v.name, `${v.poll.apiMs} (${v.poll.apiToFloor}, +${v.poll.addedApiMs})`, v.poll.rps]),
      ),
      '',
    );
  }
  if (s.presence) {
    const { trackerCpuNsPerRequest: ns, redisCommandsPerPoll: writes } = s.presence;
    out.push(
      `Presence is always on (in every row above): the tracker's work on a request is ${ns} ns of API CPU, and ` +
        `it wrote ${writes} Redis commands per poll (HSET, PERSIST, ZADD once per session per quarter window). The ` +
        'audit trail is written by admin writes only: no register or customer request pays for it.',
      '',
    );
  }
  if (s.relay) {
    const [alone, subscribed] = s.relay.runs;
    const capacity =
      s.relay.capacityEventsPerSecond > 0
        ? `; the service produced ${s.relay.capacityEventsPerSecond} a second at capacity (its ` +
          `best status-update rate, ${s.relay.eventsPerReport} events each)`
        : '';
    out.push(
      `One event relay sustains ${alone?.eventsPerSecond} events a second recorded alone and ` +
        `${subscribed?.eventsPerSecond} with one subscription to every event (their deliveries queued), ` +
        `on a backlog of ${alone?.events} events in ${s.relay.orders} orders${capacity}.`,
      '',
    );
  }
  const memoryRow = (st: StreamMemoryVerdict, label: string) => {
    const floors = st.rssFloorKoaKiB === undefined ? '' : `${st.rssFloorNodeKiB} / ${st.rssFloorKoaKiB} KiB`;
    return [
      `RSS per open stream, ${label} (beside it: bare Node http / bare Koa holding as many)`,
      `${st.rssPerStreamKiB} KiB`,
      floors,
      '',
      `≤ ${st.rssTargetKiB} KiB`,
      unjudgedRss(st) ?? mark(st.rssMet),
    ];
  };
  const [st, chain, mongo] = [s.streams, s.chainStreams, s.mongoRoundTrips];
  out.push(
    table(
      ['figure', 'service', 'floor', 'ratio', 'target', ''],
      [
        [
          'MongoDB commands per status update (API + worker)',
          mongo.statusUpdate,
          '',
          '',
          `≤ ${mongo.target}`,
          mark(mongo.statusUpdate <= mongo.target),
        ],
        ['MongoDB commands per poll', mongo.poll, '', '', `≤ ${mongo.target}`, mark(mongo.poll <= mongo.target)],
        [
          'Redis commands per status update',
          s.redisCommands.statusUpdate,
          s.redisCommands.floorPerJob || '–',
          '',
          '',
          '',
        ],
        ['Redis commands per poll', s.redisCommands.poll, '', '', '', ''],
        ...(st ? [memoryRow(st, `${st.streams} streams of one location on one node`)] : []),
        ...(st
          ? [
              [
                `fan-out, ${st.streams} streams, publish to last write, p50 (floor: a bare write loop)`,
                `${st.serverFanOutP50Ms} ms`,
                `${st.floorP50Ms} ms`,
                st.ratio,
                `≤ ${st.ratioTarget}`,
                mark(st.ratioMet),
              ],
            ]
          : []),
        ...(chain ? [memoryRow(chain, `${chain.streams} streams over ${chain.locations} locations on one node`)] : []),
        ...(chain
          ? [
              [
                `fan-out over ${chain.locations} locations while orders flow, create to arrival, p50 / p99`,
                `${chain.fanOutP50Ms} / ${chain.fanOutP99Ms} ms`,
                '',
                '',
                '',
                `${chain.missed} missed`,
              ],
            ]
          : []),
      ],
    ),
  );
  return out.join('\n');
}

function renderClusterTable(
  cluster: ClusterResults,
  single: Pick<BenchResults, 'statusUpdates' | 'fanOut'> | undefined,
): string {
  const concurrencies = new Set(cluster.statusUpdates.map((s) => s.concurrency));
  const streams = new Set(cluster.fanOut.map((f) => f.streams));
  const status = (where: string, rows: StatusUpdateResult[]) =>
    rows
      .filter((s) => concurrencies.has(s.concurrency))
      .map((s) => [
        where,
        `status updates, ${s.locations} locations`,
        s.concurrency,
        s.rps,
        s.p50Ms,
        s.p99Ms,
        s.errors,
        formatCpu(s.redisCpu),
      ]);
  const fanOut = (where: string, rows: FanOutLevel[]) =>
    rows
      .filter((f) => streams.has(f.streams))
      .map((f) => [
        where,
        'stream fan-out (submit to arrival)',
        f.streams,
        '',
        f.p50Ms,
        f.p99Ms,
        f.missed,
        formatCpu(f.redisCpu),
      ]);
  const on = `cluster (${cluster.shape}, ${cluster.partitions} partitions)`;
  return [
    `**On a Redis Cluster** (${cluster.shape}, started from redis-server on this machine; the ` +
      `transition queue in ${cluster.partitions} partitions, two on each master) next to one ` +
      "Redis. Redis CPU: each process's user + system time over the measured run, in % of one core " +
      "(from /proc). The fan-out's errors column is streams missed.",
    '',
    table(
      ['Redis', 'scenario', 'clients / streams', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'Redis CPU'],
      [
        ...(single ? status('one Redis', single.statusUpdates) : []),
        ...status(on, cluster.statusUpdates),
        ...(single ? fanOut('one Redis', single.fanOut) : []),
        ...fanOut(on, cluster.fanOut),
      ],
    ),
  ].join('\n');
}

function renderMenus(m: NonNullable<Summary['menus']>): string {
  const t = MENU_TARGETS;
  const mark = (met: boolean) => (met ? 'met' : 'not met');
  const out: string[] = [];
  if (m.orders.length > 0) {
    out.push(
      '**Menus: customer orders priced on the server** (an order created, finished and submitted by a customer: ' +
        'three requests; at a location with a 2,000-item menu, rows naming products, against the same at a ' +
        'location without one, rows named and priced by the app; alternating 0.5 s slices on one deployment, the ' +
        'register completing the submitted orders between slices, outside the measure; menu documents read: what ' +
        "the API nodes read of MongoDB's menus during both runs, 0 when each node holds the menu it prices from)",
      '',
      table(
        [
          'clients',
          'API CPU ms, menu / none (ratio)',
          'menu documents read',
          'orders/s, menu / none (ratio)',
          'p50 ms, menu / none',
          'errors',
          `API CPU ≤ ${t.apiCpu}×, orders/s ≥ ${t.rps}×`,
        ],
        m.orders.map((o) => [
          o.clients,
          `${o.menu.apiMs} / ${o.without.apiMs} (${o.ratio.apiMs})`,
          o.menuDocumentReads,
          `${o.menu.rps} / ${o.without.rps} (${o.ratio.rps})`,
          `${o.menu.p50Ms} / ${o.without.p50Ms}`,
          o.errors,
          mark(o.met),
        ]),
      ),
    );
  }
  if (m.read) {
    const r = m.read;
    out.push(
      '',
      `**Menus: the customer's menu read** (\`GET /customer/menu\`, ${r.items} items, ${r.bytes200} ` +
        "bytes answered in full; a 304 to its ETag; the API's CPU per request, runs one after the " +
        `other): at ${r.concurrency} clients a 200 cost ${r.cpuMs200} ms and a 304 ${r.cpuMs304} ms ` +
        `(${Math.round(r.share * 100)} %, target ≤ ${t.notModifiedShare * 100} %: ${mark(r.met)}; ` +
        `${r.rps200} and ${r.rps304} req/s). At one client, ${r.oneClient.cpuMs200} and ` +
        `${r.oneClient.cpuMs304} ms (${Math.round(r.oneClientShare * 100)} %): there a 304 costs what ` +
        'any authenticated read with one MongoDB read does.',
    );
  }
  if (m.publish) {
    const p = m.publish;
    out.push(
      '',
      `**Menus: one menu published to many locations** (${p.items} items, ${p.menuBytes} bytes of ` +
        `JSON, to ${p.locations} locations in one call; bytes the service's processes sent MongoDB, ` +
        "counted on the wire, until the publish's events were in the event log): " +
        `${p.seconds} s and ${p.bytesWritten} bytes; another menu of that size to one location, ` +
        `${p.oneLocation.seconds} s and ${p.oneLocation.bytesWritten} bytes (the time is the ` +
        "database's: a write of a location on the stand-in slows as the collection grows). Each " +
        `location beyond the first added ${p.bytesPerLocation} bytes ` +
        `(its pointer, its events, its FETCH_REMOTE_MENU command): ${(p.copyShare * 100).toFixed(2)} ` +
        `% of a copy of the menu (target ≤ ${t.copyShare * 100} %: ${mark(p.met)}).`,
    );
  }
  return out.join('\n');
}

function renderArchive(a: ArchiveScenario): string {
  const env = Object.entries(a.settings.lifecycle)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return [
    `**Orders piling up** (status updates and polls at ${a.settings.concurrency} clients, on a fresh database ` +
      `and after ${a.variants[1]?.finishedBefore ?? 0} orders were created and completed through the service; ` +
      `the lifecycle job running in both (${env}) while a register finishes ` +
      `${a.settings.churnPerSecond} new orders a second; ` +
      `${a.settings.rounds} alternating rounds of ${a.settings.secondsPerRun} ` +
      's per measure and variant, the median round shown)',
    '',
    table(
      [
        'database',
        'status req/s',
        'status p50 ms',
        'status p99 ms',
        'poll req/s',
        'poll p50 ms',
        'poll p99 ms',
        'errors',
        'hot docs',
        'archived docs',
        'job runs (mean ms)',
        'archived in runs',
      ],
      a.variants.map((v) => [
        v.name === 'fresh' ? 'fresh' : `${v.finishedBefore} finished before`,
        ...[v.statusUpdates, v.polls].flatMap((run) => [run.rps, run.p50Ms, run.p99Ms]),
        ...[
          v.statusUpdates.errors + v.polls.errors,
          `${v.hotAtStart} → ${v.hotAtEnd}`,
          `${v.archivedAtStart} → ${v.archivedAtEnd}`,
          `${v.runs} (${v.runMeanMs})`,
          v.archivedDuringRuns,
        ],
      ]),
    ),
    '',
    `Backlog over fresh: status update p50 ${a.ratio.statusP50} x, throughput ` +
      `${a.ratio.statusRps} x; poll p50 ${a.ratio.pollP50} x, throughput ${a.ratio.pollRps} x. ` +
      `Seeding took ${a.variants[1]?.seedSeconds ?? 0} s; the job had archived everything ` +
      `${a.variants[1]?.catchUpSeconds ?? 0} s after the last order finished.`,
  ].join('\n');
}

function renderOverload(o: OverloadScenario): string {
  return [
    '**Overload** (failure reports in open-loop arrivals, from a load generator of its own process, at multiples ' +
      `of the capacity C = ${o.capacity.rps} req/s measured first with 64 closed-loop clients; ` +
      `one worker with WORKER_CONCURRENCY=${o.workerConcurrency}, so that the worker is ` +
      `the bottleneck; QUEUE_WAIT_TARGET ${o.queueWaitTargetMs} ms). ` +
      'Goodput: answers 200 within JOB_TIMEOUT + 1 s, per second, over C. Wasted: of the jobs the worker ran ' +
      '(not those it refused as expired), the share done for requests that got no success.',
    '',
    table(
      [
        'phase',
        'sent req/s',
        'goodput / C',
        'its second half',
        '200',
        'shed (503 at once)',
        'not applied',
        'unknown',
        'other',
        'admitted p99 ms',
        'refusal p99 ms',
        'slowest ms',
        'jobs finished',
        'expired',
        'API CPU s',
      ],
      o.phases.map((p) => [
        p.name,
        p.perSecond,
        p.goodputRatio,
        p.secondHalfGoodputRatio,
        p.ok,
        p.shed,
        p.notApplied,
        p.unknown,
        p.other + p.failed,
        p.admittedP99Ms,
        p.refusalP99Ms,
        p.maxMs,
        p.jobsRun,
        p.jobsExpired,
        p.apiCpuMs === undefined ? '' : ratio(p.apiCpuMs, 1000),
      ]),
    ),
    '',
    `Recovery after the last overload phase: ${o.recoverySeconds} s (until ` +
      'every 250 ms window answers >= 99 % 200s with p99 <= 1 s). ' +
      `Over the run the worker ran ${o.jobsRun} jobs and refused ${o.jobsExpired} as expired; ` +
      `wasted: ${o.wastedShare} (jobs run for requests that got no success). ` +
      `Failure reports applied to the orders: ${o.applied.failureReports}, for ${o.applied.answered200} ` +
      'answered 200 (equal: every acknowledged write applied once, no refused one at all). ' +
      `Polls of another location all along (${o.polls.count}): ${o.polls.within1sShare} within 1 s, ` +
      `p50 ${o.polls.p50Ms} ms, p99 ${o.polls.p99Ms} ms, errors ${o.polls.errors}.` +
      (o.apiCpu
        ? ` The API node's CPU, split over the phases: ${o.apiCpu.perAdmittedMs} ms per admitted request, ` +
          `${o.apiCpu.perRefusalMs} ms per refusal (${o.apiCpu.refusalShare} of an admitted one).`
        : '') +
      (o.apiCpuApart
        ? ` Measured apart: ${o.apiCpuApart.perAdmittedMs} ms per request of the capacity run, ` +
          `${o.apiCpuApart.perRefusalMs} ms per refusal with the worker stopped ` +
          `(${o.apiCpuApart.refusals} refusals at once, ${o.apiCpuApart.others} other answers; ` +
          `an upper bound), ${o.apiCpuApart.refusalShare} of an admitted one.`
        : ''),
  ].join('\n');
}
