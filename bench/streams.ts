/**
 * The streams level: 10,000 event streams open on one API node. Measures the node's memory per
 * open stream, and the fan-out of one event to all of them, from the worker's publication to the
 * node's last write (the node's own figure, `pos_fanout_seconds` on /metrics), against its floor
 * measured in the same run: a bare Node process writing the same frame to 10,000 loopback
 * sockets in one loop. The client-side arrival times of both are given beside them. The streams
 * are held by several client processes (raw sockets, bench/stream-clients.ts).
 */
import { ChildProcess, execSync, fork } from 'node:child_process';
import path from 'node:path';
import { CustomerClient } from '@pos/shared/clients/customer-client';
import { ROOT } from '../scripts/embedded/spawn-role';
import type { HeldReply } from './bare/held-streams';
import type { FloorReply } from './bare/socket-floor';
import type { Cost } from './cost';
import type { Backends } from './deployment';
import { collectGarbage, deploy, GC_HOOK, scrapeMetrics } from './deployment';
import { percentile, round } from './statistics';
import { inBatches } from './service-load';
import type { ClientCommand, ClientReply } from './stream-clients';

const ROWS = [{ productId: 'sku-burger', name: 'Burger', quantity: 1, unitPrice: 1290 }];
/** Register keys the streams share (SSE_MAX_STREAMS_PER_SESSION is raised for the benchmark). */
const KEYS = 10;
/** Streams open when the memory baseline is taken (the code paths warm, the node settled). */
export const BASELINE_STREAMS = 100;
/**
 * Idle time before each memory reading (BENCH_SETTLE_MS): V8 gives back the heap pages that the
 * burst of opening left empty only once allocation has been quiet for some 40 s (its memory
 * reducer), and open streams are long-lived, so the reading is of the settled process.
 */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? (process.env.BENCH_QUICK === '1' ? 2_000 : 40_000));
export const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
/**
 * Idle time before the reading after the service's burst of thousands of openings
 * (BENCH_BURST_SETTLE_MS, at least BENCH_SETTLE_MS): V8 compacts what the burst left fragmented in
 * its memory reducer's collections, which start only once the allocation rate it records is low,
 * and it averages that rate over its last ten collections, the burst's among them: 70 to 100 s
 * after 10,000 openings here, on a node whose idle rounds allocate little.
 */
const BURST_SETTLE_MS = Math.max(SETTLE_MS, Number(process.env.BENCH_BURST_SETTLE_MS ?? (process.env.BENCH_QUICK === '1' ? 0 : 120_000)));
export const settleAfterBurst = () => new Promise((resolve) => setTimeout(resolve, BURST_SETTLE_MS));

export interface StreamsLevel {
  streams: number;
  clientProcesses: number;
  /** After a full GC, with BASELINE_STREAMS open and with all of them. */
  memory: StreamMemory & { baselineStreams: number };
  events: number;
  /** The node's own figure per event: the worker's publication to the node's last write, ms. */
  serverFanOutMs: { p50: number; max: number; values: number[] };
  /** The bare loop writing the same frame to as many loopback sockets, ms. */
  floorMs: { p50: number; max: number; values: number[] };
  /** serverFanOut p50 / floor p50; the target is at most 1.5. */
  ratio: number;
  /** Client side: from the start of the submit request to arrival, ms (p50 over all streams and events; last stream p50 over events). */
  arrival: { p50Ms: number; p99Ms: number; lastP50Ms: number; missed: number };
  /** Client side for the floor: from the start of its loop to arrival. */
  floorArrival: { p50Ms: number; p99Ms: number; lastP50Ms: number; missed: number };
  /** What one event (a submission and its fan-out) cost the processes behind it. */
  cost?: Cost;
  frameBytes: number;
  /**
   * The same memory figure for bare servers holding as many event-stream responses open (head
   * written, nothing else kept): Node's http alone, and through Koa.
   */
  memoryFloors: { server: 'node' | 'koa'; rssPerStreamKiB: number; heapPerStreamKiB: number }[];
}

/** A streams level's memory reading against its target, beside the bare servers' (the summaries of both levels). */
export interface StreamMemoryVerdict {
  streams: number;
  rssPerStreamKiB: number;
  /** The same figure for bare servers holding as many responses (Node's http; Koa). */
  rssFloorNodeKiB?: number;
  rssFloorKoaKiB?: number;
  rssTargetKiB: number;
  /**
   * False when RSS grew less than the heap the streams use: the process gave back pages between
   * the readings (those of its start-up or of an earlier burst; a short BENCH_SETTLE_MS), so the
   * RSS figure is not the streams' cost. Absent in runs before it was kept.
   */
  rssReliable?: boolean;
  rssMet: boolean;
}

const RSS_TARGET_KIB = 16;

export function memoryVerdict(streams: number, memory: StreamMemory, floors: StreamsLevel['memoryFloors'] | undefined): StreamMemoryVerdict {
  const reliable = rssReliable(memory);
  return {
    streams,
    rssPerStreamKiB: memory.rssPerStreamKiB,
    rssFloorNodeKiB: floors?.find((f) => f.server === 'node')?.rssPerStreamKiB,
    rssFloorKoaKiB: floors?.find((f) => f.server === 'koa')?.rssPerStreamKiB,
    rssTargetKiB: RSS_TARGET_KIB,
    rssReliable: reliable,
    rssMet: reliable && memory.rssPerStreamKiB <= RSS_TARGET_KIB,
  };
}

export interface StreamsSummary extends StreamMemoryVerdict {
  /** Locations the streams belong to (1: all on one location). */
  locations?: number;
  serverFanOutP50Ms: number;
  floorP50Ms: number;
  ratio: number;
  ratioTarget: number;
  ratioMet: boolean;
}

const mib = (bytes: number) => round(bytes / 1024 / 1024, 1);

/** What the open streams added to a node between two scrapes (each after a full GC), per stream. */
export interface StreamMemory {
  rssBeforeMiB: number;
  rssAfterMiB: number;
  heapBeforeMiB: number;
  heapAfterMiB: number;
  rssPerStreamKiB: number;
  heapPerStreamKiB: number;
  /** V8's heap as reserved (used plus free space in its pages), and memory outside it (buffers), per stream. */
  heapTotalPerStreamKiB: number;
  externalPerStreamKiB: number;
}

export function memoryPerStream(before: Map<string, number>, after: Map<string, number>): StreamMemory {
  const sample = (m: Map<string, number>, name: string) => m.get(name) ?? 0;
  const added = sample(after, 'pos_streams_open') - sample(before, 'pos_streams_open');
  const perStream = (name: string) => round((sample(after, name) - sample(before, name)) / added / 1024, 1);
  return {
    rssBeforeMiB: mib(sample(before, 'process_resident_memory_bytes')),
    rssAfterMiB: mib(sample(after, 'process_resident_memory_bytes')),
    heapBeforeMiB: mib(sample(before, 'nodejs_heap_size_used_bytes')),
    heapAfterMiB: mib(sample(after, 'nodejs_heap_size_used_bytes')),
    rssPerStreamKiB: perStream('process_resident_memory_bytes'),
    heapPerStreamKiB: perStream('nodejs_heap_size_used_bytes'),
    heapTotalPerStreamKiB: perStream('nodejs_heap_size_total_bytes'),
    externalPerStreamKiB: perStream('nodejs_external_memory_bytes'),
  };
}

/** A forked helper process answering one command at a time over IPC. */
export class Helper<Command, Reply> {
  private waiting: ((reply: Reply) => void) | undefined;

  private constructor(readonly child: ChildProcess) {
    child.on('message', (reply: Reply) => {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve?.(reply);
    });
  }

  static start<C, R>(entry: string, args: string[] = [], nodeArgs: string[] = []): { helper: Helper<C, R>; first: Promise<R> } {
    const child = fork(path.join(ROOT, entry), args, { cwd: ROOT, execArgv: ['--require', 'tsx/cjs', ...nodeArgs], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const helper = new Helper<C, R>(child);
    return { helper, first: new Promise<R>((resolve) => (helper.waiting = resolve)) };
  }

  ask(command: Command): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => {
      this.waiting = resolve;
      this.child.send(command as object, (err) => err && reject(err));
    });
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

/**
 * The soft limit on open files, raised to the hard one for this process (and so for the
 * processes it starts) when it is below what the level needs. The benchmark only: the service
 * leaves limits to its deployment.
 */
export function raiseFileLimit(needed: number, say: (line: string) => void): void {
  try {
    const [soft, hard] = execSync(`prlimit --pid ${process.pid} --nofile --output SOFT,HARD --noheadings`)
      .toString()
      .trim()
      .split(/\s+/)
      .map((v) => (v === 'unlimited' ? Infinity : Number(v)));
    if (soft! >= needed) return;
    execSync(`prlimit --pid ${process.pid} --nofile=${hard}:${hard}`);
    say(`open files: soft limit raised from ${soft} to ${hard}${hard! < needed ? ` (still below the ${needed} this level needs)` : ''}`);
  } catch (err) {
    say(`open files: could not read or raise the limit (${(err as Error).message.split('\n')[0]})`);
  }
}

export async function measureStreams(
  backends: Backends,
  options: { streams: number; clientProcesses: number; events: number; say(line: string): void },
): Promise<StreamsLevel> {
  const { streams, say } = options;
  raiseFileLimit(streams + 1_000, say);
  const deployment = await deploy('streams', backends, { apiCount: 1, apiNodeArgs: GC_HOOK, maxStreams: streams });
  const clients: Helper<ClientCommand, ClientReply>[] = [];
  let floor: Helper<{ cmd: 'write'; frame: string }, FloorReply> | undefined;
  try {
    const { admin, apis } = deployment;
    const api = apis[0]!;
    const port = Number(new URL(api.origin).port);
    const location = await admin.createLocation('Bench streams');
    const keys = await inBatches(KEYS, 1, (i) => admin.createServiceSession(location.id, `bench-streams-${i}`));
    const requests = keys.map(
      ({ apiKey }) => `GET /api/v1/notifications/service/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\napi_key: ${apiKey}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    const customer = new CustomerClient(api.baseUrl, (await admin.createCustomerSession(location.id, 1)).apiKey);
    for (let i = 0; i < options.clientProcesses; i++) {
      const { helper } = Helper.start<ClientCommand, ClientReply>('bench/stream-clients.ts');
      clients.push(helper);
    }
    const share = (total: number, i: number) => Math.floor(total / clients.length) + (i < total % clients.length ? 1 : 0);
    const openAll = async (total: number, target: number, withRequests: boolean) => {
      const replies = await Promise.all(clients.map((c, i) => c.ask({ cmd: 'open', port: target, count: share(total, i), ...(withRequests ? { requests } : {}) })));
      const opened = replies.reduce((sum, r) => sum + ('opened' in r ? r.opened : 0), 0);
      const errors = replies.flatMap((r) => ('errors' in r ? r.errors : []));
      if (opened < total) throw new Error(`opened ${opened} of ${total} connections: ${errors.join('; ')}`);
    };
    const expect = async (marker: string, timeoutMs = 30_000) => {
      const replies = await Promise.all(clients.map((c) => c.ask({ cmd: 'expect', marker, timeoutMs })));
      return {
        arrivals: replies.flatMap((r) => ('arrivals' in r ? r.arrivals : [])),
        missed: replies.reduce((sum, r) => sum + ('missed' in r ? r.missed : 0), 0),
      };
    };

    // Memory: baseline with a few streams open, then all of them; a full GC before each reading.
    await openAll(BASELINE_STREAMS, port, true);
    await settle();
    await collectGarbage(apis);
    const before = await scrapeMetrics(api.origin);
    const opened = Date.now();
    await openAll(streams - BASELINE_STREAMS, port, true);
    say(`streams: ${streams} open on one API node (${Math.round((Date.now() - opened) / 1000)} s to open)`);
    await settleAfterBurst();
    await collectGarbage(apis);
    const after = await scrapeMetrics(api.origin);
    const memory = { baselineStreams: before.get('pos_streams_open') ?? 0, ...memoryPerStream(before, after) };
    say(
      `streams: ${memory.rssPerStreamKiB} KiB RSS, ${memory.heapPerStreamKiB} KiB heap used (${memory.heapTotalPerStreamKiB} KiB heap reserved, ${memory.externalPerStreamKiB} KiB external) per stream`,
    );

    // Fan-out: an order submitted by a customer (through the queue and the worker) reaches every stream.
    const warmup = 2;
    const orders = await inBatches(warmup + options.events, 1, async () => {
      const order = await customer.createOrder(ROWS);
      await customer.finish(order.number);
      return order.number;
    });
    const serverMs: number[] = [];
    const arrivals: number[] = [];
    const lastArrivals: number[] = [];
    let missed = 0;
    let frameBytes = 0;
    let frame = '';
    const probe = deployment.probe();
    for (const [i, number] of orders.entries()) {
      if (i === warmup) await probe.start();
      const fanOutBefore = fanOutTotals(await scrapeMetrics(api.origin));
      const marker = `"number":${number},"state":"PLACED"`;
      const arrived = expect(marker);
      const t0 = performance.timeOrigin + performance.now();
      const record = await customer.submit(number);
      const got = await arrived;
      const fanOutAfter = fanOutTotals(await scrapeMetrics(api.origin));
      if (i < warmup) continue;
      frame = `id: ${number}.0\nevent: order\ndata: ${JSON.stringify(record)}\n\n`;
      frameBytes = Buffer.byteLength(frame);
      if (fanOutAfter.count - fanOutBefore.count === 1) serverMs.push(round((fanOutAfter.sum - fanOutBefore.sum) * 1000, 3));
      arrivals.push(...got.arrivals.map((at) => at - t0));
      if (got.arrivals.length > 0) lastArrivals.push(Math.max(...got.arrivals) - t0);
      missed += got.missed;
    }
    const cost = await probe.stop(options.events);
    say(`streams: fan-out p50 ${round(percentile([...serverMs].sort((a, b) => a - b), 50))} ms on the node (publish to last write), missed ${missed}`);

    // The floor: the same frame, written by a bare process to as many loopback sockets.
    await Promise.all(clients.map((c) => c.ask({ cmd: 'close' })));
    const started = Helper.start<{ cmd: 'write'; frame: string }, FloorReply>('bench/bare/socket-floor.ts');
    floor = started.helper;
    const floorPort = ((await started.first) as { port: number }).port;
    await openAll(streams, floorPort, false);
    const floorMs: number[] = [];
    const floorArrivals: number[] = [];
    const floorLast: number[] = [];
    let floorMissed = 0;
    for (let i = 0; i < warmup + options.events; i++) {
      const arrived = expect(frame.slice(frame.indexOf('data: ')));
      const reply = (await floor.ask({ cmd: 'write', frame })) as { sockets: number; startedAt: number; loopMs: number };
      const got = await arrived;
      if (i < warmup) continue;
      floorMs.push(round(reply.loopMs, 3));
      floorArrivals.push(...got.arrivals.map((at) => at - reply.startedAt));
      if (got.arrivals.length > 0) floorLast.push(Math.max(...got.arrivals) - reply.startedAt);
      floorMissed += got.missed;
    }
    say(`streams: floor p50 ${round(percentile([...floorMs].sort((a, b) => a - b), 50))} ms (a bare loop writing ${frameBytes} bytes to ${streams} sockets)`);
    await Promise.all(clients.map((c) => c.ask({ cmd: 'close' })));
    floor.stop();
    floor = undefined;

    // The memory floors: bare servers holding as many stream responses, measured the same way.
    const memoryFloors: StreamsLevel['memoryFloors'] = [];
    for (const server of ['node', 'koa'] as const) {
      const held = Helper.start<'measure', HeldReply>('bench/bare/held-streams.ts', [server], ['--expose-gc']);
      try {
        const heldPort = ((await held.first) as { port: number }).port;
        const plain = [`GET /stream HTTP/1.1\r\nHost: 127.0.0.1:${heldPort}\r\napi_key: ${keys[0]!.apiKey}\r\nAccept: text/event-stream\r\n\r\n`];
        const openHeld = async (total: number) => {
          await Promise.all(clients.map((c, i) => c.ask({ cmd: 'open', port: heldPort, count: share(total, i), requests: plain })));
          await settle();
          return (await held.helper.ask('measure')) as { open: number; rss: number; heapUsed: number };
        };
        const base = await openHeld(BASELINE_STREAMS);
        const all = await openHeld(streams - BASELINE_STREAMS);
        const n = all.open - base.open;
        memoryFloors.push({ server, rssPerStreamKiB: round((all.rss - base.rss) / n / 1024, 1), heapPerStreamKiB: round((all.heapUsed - base.heapUsed) / n / 1024, 1) });
        say(`streams: a bare ${server} server holding ${all.open} streams: ${memoryFloors.at(-1)!.rssPerStreamKiB} KiB RSS, ${memoryFloors.at(-1)!.heapPerStreamKiB} KiB heap per stream`);
      } finally {
        await Promise.all(clients.map((c) => c.ask({ cmd: 'close' })));
        held.helper.stop();
      }
    }

    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const p50 = (values: number[]) => round(percentile(sorted(values), 50));
    const arrivalFigures = (all: number[], last: number[], lost: number) => ({
      p50Ms: p50(all),
      p99Ms: round(percentile(sorted(all), 99)),
      lastP50Ms: p50(last),
      missed: lost,
    });
    return {
      streams,
      clientProcesses: clients.length,
      memory,
      events: options.events,
      serverFanOutMs: { p50: p50(serverMs), max: round(Math.max(0, ...serverMs)), values: serverMs },
      floorMs: { p50: p50(floorMs), max: round(Math.max(0, ...floorMs)), values: floorMs },
      ratio: p50(floorMs) > 0 ? round(p50(serverMs) / p50(floorMs)) : 0,
      arrival: arrivalFigures(arrivals, lastArrivals, missed),
      floorArrival: arrivalFigures(floorArrivals, floorLast, floorMissed),
      cost,
      frameBytes,
      memoryFloors,
    };
  } finally {
    floor?.stop();
    for (const client of clients) client.stop();
    await deployment.stop().catch(() => undefined);
  }
}

export function summariseStreams(level: StreamsLevel): StreamsSummary {
  return {
    ...memoryVerdict(level.streams, level.memory, level.memoryFloors),
    serverFanOutP50Ms: level.serverFanOutMs.p50,
    floorP50Ms: level.floorMs.p50,
    ratio: level.ratio,
    ratioTarget: 1.5,
    ratioMet: level.ratio > 0 && level.ratio <= 1.5,
  };
}

/** Whether a reading's RSS per stream holds at least the heap the streams use (see StreamsSummary). */
export const rssReliable = (memory: Pick<StreamMemory, 'rssPerStreamKiB' | 'heapPerStreamKiB'>) => memory.rssPerStreamKiB >= memory.heapPerStreamKiB;

/** What the tables say of a reading that is not reliable, instead of met or not. */
const UNRELIABLE_RSS = 'unreliable: RSS grew less than the heap (pages given back between readings; a longer BENCH_SETTLE_MS)';

/** What a table says of a reading in place of its verdict: why it cannot be judged, or undefined when it can. */
export const unjudgedRss = (verdict: Pick<StreamMemoryVerdict, 'rssReliable'>): string | undefined => (verdict.rssReliable === false ? UNRELIABLE_RSS : undefined);

/** Sum (seconds) and count of the node's fan-out histogram. */
function fanOutTotals(samples: Map<string, number>): { sum: number; count: number } {
  return { sum: samples.get('pos_fanout_seconds_sum') ?? 0, count: samples.get('pos_fanout_seconds_count') ?? 0 };
}
