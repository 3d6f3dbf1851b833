/** What the streams scenarios share: the processes holding the connections, and the memory reading. */
import { type ChildProcess, execSync, fork } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { ROOT } from '../scripts/embedded/spawn-role';
import { type ApiNode, collectGarbage, scrapeMetrics } from './deployment';
import { percentile, round } from './statistics';
import type { ClientCommand, ClientReply, Target } from './stream-clients';

/** Streams open when the memory baseline is taken (the code paths warm, the node settled). */
export const BASELINE_STREAMS = 100;
const quick = process.env.BENCH_QUICK === '1';
// Idle time before a memory reading (BENCH_SETTLE_MS): V8's memory reducer gives back empty pages
// after some 40 s of quiet; after a burst of openings (BENCH_BURST_SETTLE_MS) it compacts 70 to 100 s
// later here, as it averages the allocation rate over its last ten collections. Streams live long.
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? (quick ? 2_000 : 40_000));
const BURST_SETTLE_MS = Math.max(SETTLE_MS, Number(process.env.BENCH_BURST_SETTLE_MS ?? (quick ? 0 : 120_000)));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const settle = () => sleep(SETTLE_MS);

export const streamRequest = (port: number, apiKey: string, path = '/api/v1/notifications/service/stream') =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\napi_key: ${apiKey}\r\nAccept: text/event-stream\r\n\r\n`;

/** A forked helper process answering one command at a time over IPC; `first` is its first message (its port). */
export class Helper<Command, Reply> {
  private readonly child: ChildProcess;
  readonly first: Promise<Reply>;

  constructor(entry: string, args: string[] = [], nodeArgs: string[] = []) {
    this.child = fork(path.join(ROOT, entry), args, {
      cwd: ROOT,
      execArgv: ['--require', 'tsx/cjs', ...nodeArgs],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    this.first = once(this.child, 'message').then(([reply]) => reply as Reply);
  }

  async ask(command: Command): Promise<Reply> {
    const reply = once(this.child, 'message');
    this.child.send(command as object);
    return (await reply)[0] as Reply;
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

/** Arrivals of one event on the held connections (epoch ms), and the connections it missed. */
export interface Arrivals {
  arrivals: number[];
  missed: number;
}

/** Client processes holding connections, each a contiguous slice of those opened together. */
export class StreamHolders {
  private readonly clients: Helper<ClientCommand, ClientReply>[];

  constructor(readonly processes: number) {
    this.clients = Array.from(
      { length: processes },
      () => new Helper<ClientCommand, ClientReply>('bench/stream-clients.ts'),
    );
  }

  /** Opens one connection per target; throws unless all of them opened. */
  async open(targets: Target[]): Promise<void> {
    const size = Math.ceil(targets.length / this.clients.length);
    const replies = await Promise.all(
      this.clients.map((c, k) => c.ask({ cmd: 'open', targets: targets.slice(k * size, (k + 1) * size) })),
    );
    const opened = replies.reduce((sum, r) => sum + ('opened' in r ? r.opened : 0), 0);
    if (opened < targets.length)
      throw new Error(
        `opened ${opened} of ${targets.length} streams: ` +
          `${replies.flatMap((r) => ('errors' in r ? r.errors : [])).join('; ')}`,
      );
  }

  async expect(marker: string, timeoutMs = 30_000): Promise<Arrivals> {
    const replies = await Promise.all(this.clients.map((c) => c.ask({ cmd: 'expect', marker, timeoutMs })));
    return {
      arrivals: replies.flatMap((r) => ('arrivals' in r ? r.arrivals : [])),
      missed: replies.reduce((sum, r) => sum + ('missed' in r ? r.missed : 0), 0),
    };
  }

  async watch(prefix: string): Promise<void> {
    await Promise.all(this.clients.map((c) => c.ask({ cmd: 'watch', prefix })));
  }

  async collect(): Promise<Map<string, number[]>> {
    const seen = new Map<string, number[]>();
    for (const reply of await Promise.all(this.clients.map((c) => c.ask({ cmd: 'collect' })))) {
      for (const [marker, times] of Object.entries('seen' in reply ? reply.seen : {}))
        seen.set(marker, [...(seen.get(marker) ?? []), ...times]);
    }
    return seen;
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.ask({ cmd: 'close' })));
  }

  stop(): void {
    for (const client of this.clients) client.stop();
  }
}

/** Latency figures of arrivals timed from t0 (ms): p50 and p99 over all, the last arrival's p50 over events. */
export type Arrival = ReturnType<typeof arrivalFigures>;
export function arrivalFigures(events: { t0: number; got: Arrivals }[]) {
  const sorted = (values: number[]) => values.sort((a, b) => a - b);
  const all = sorted(events.flatMap(({ t0, got }) => got.arrivals.map((at) => at - t0)));
  const last = sorted(
    events.filter(({ got }) => got.arrivals.length > 0).map(({ t0, got }) => Math.max(...got.arrivals) - t0),
  );
  const missed = events.reduce((sum, { got }) => sum + got.missed, 0);
  return {
    p50Ms: round(percentile(all, 50)),
    p99Ms: round(percentile(all, 99)),
    maxMs: round(all.at(-1) ?? 0),
    lastP50Ms: round(percentile(last, 50)),
    missed,
  };
}

/** What the open streams added to a node between two readings (each after a full GC), per stream. */
export interface StreamMemory {
  baselineStreams: number;
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

/**
 * The node's memory per stream, read with the baseline open and with all
 * (`open(from, to)`), each settled and after a full GC.
 */
export async function readStreamMemory(
  api: ApiNode,
  streams: number,
  open: (from: number, to: number) => Promise<void>,
  say: (line: string) => void,
): Promise<StreamMemory> {
  await open(0, BASELINE_STREAMS);
  await settle();
  await collectGarbage([api]);
  const before = await scrapeMetrics(api.origin);
  const opened = Date.now();
  await open(BASELINE_STREAMS, streams);
  say(`${streams} streams open (${Math.round((Date.now() - opened) / 1000)} s to open)`);
  await sleep(BURST_SETTLE_MS);
  await collectGarbage([api]);
  const after = await scrapeMetrics(api.origin);
  const sample = (m: Map<string, number>, name: string) => m.get(name) ?? 0;
  const mib = (m: Map<string, number>, name: string) => round(sample(m, name) / 1024 / 1024, 1);
  const added = sample(after, 'pos_streams_open') - sample(before, 'pos_streams_open');
  const perStream = (name: string) => round((sample(after, name) - sample(before, name)) / added / 1024, 1);
  const memory = {
    baselineStreams: sample(before, 'pos_streams_open'),
    rssBeforeMiB: mib(before, 'process_resident_memory_bytes'),
    rssAfterMiB: mib(after, 'process_resident_memory_bytes'),
    heapBeforeMiB: mib(before, 'nodejs_heap_size_used_bytes'),
    heapAfterMiB: mib(after, 'nodejs_heap_size_used_bytes'),
    rssPerStreamKiB: perStream('process_resident_memory_bytes'),
    heapPerStreamKiB: perStream('nodejs_heap_size_used_bytes'),
    heapTotalPerStreamKiB: perStream('nodejs_heap_size_total_bytes'),
    externalPerStreamKiB: perStream('nodejs_external_memory_bytes'),
  };
  say(
    `${memory.rssPerStreamKiB} KiB RSS, ${memory.heapPerStreamKiB} KiB heap used ` +
      `(${memory.heapTotalPerStreamKiB} reserved, ${memory.externalPerStreamKiB} external) per stream`,
  );
  return memory;
}

/** Raises this process's soft limit on open files (and its children's) to the hard one when below `needed`. */
export function raiseFileLimit(needed: number, say: (line: string) => void): void {
  try {
    const [soft, hard] = execSync(`prlimit --pid ${process.pid} --nofile --output SOFT,HARD --noheadings`)
      .toString()
      .trim()
      .split(/\s+/)
      .map((v) => (v === 'unlimited' ? Infinity : Number(v)));
    if (soft! >= needed) return;
    execSync(`prlimit --pid ${process.pid} --nofile=${hard}:${hard}`);
    say(
      `open files: soft limit raised from ${soft} to ` +
        `${hard}${hard! < needed ? ` (still below the ${needed} needed)` : ''}`,
    );
  } catch (err) {
    say(`open files: could not read or raise the limit (${(err as Error).message.split('\n')[0]})`);
  }
}
