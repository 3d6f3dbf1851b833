/**
 * Stream fan-out: a customer submits an order (NEW to PLACED through the queue and worker) and
 * every open register stream of the location receives it. Streams are spread over two API
 * nodes; latency is from the start of the submit request to the event's arrival on each stream.
 * Also the API nodes' memory before and after the streams are opened.
 */
import { CustomerClient } from '@pos/shared/clients/customer-client';
import { RegisterClient, WorkStream } from '@pos/shared/clients/register/client';
import type { Backends, Deployment } from './deployment';
import { collectGarbage, deploy, GC_HOOK, scrapeMetrics } from './deployment';
import type { Cost } from './cost';
import { percentile } from './statistics';
import { CpuShare, measureCpu } from './redis-cpu';
import { inBatches } from './service-load';

const ROWS = [{ productId: 'sku-burger', name: 'Burger', quantity: 1, unitPrice: 1290 }];
const KEYS = 10;

export interface FanOutLevel {
  streams: number;
  apiNodes: number;
  submissions: number;
  /** Arrivals measured (streams x submissions) and the ones that never came. */
  samples: number;
  missed: number;
  /** Submission to arrival, over every stream and submission. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Submission to arrival at the last stream, median over submissions. */
  lastArrivalP50Ms: number;
  /** Each Redis process's CPU during the measured submissions. */
  redisCpu: CpuShare[];
  /** What one submission (and its fan-out) cost the processes behind it. */
  cost?: Cost;
}

export interface NodeMemory {
  streamsBefore: number;
  streams: number;
  rssBeforeMiB: number;
  rssAfterMiB: number;
  heapUsedBeforeMiB: number;
  heapUsedAfterMiB: number;
}

export interface StreamMemory {
  streams: number;
  nodes: NodeMemory[];
  /**
   * Growth per added stream from the first level (streams open, code warm) to the last,
   * averaged over the nodes; a full GC runs before each reading.
   */
  rssPerStreamKiB: number;
  heapPerStreamKiB: number;
}

interface Pending {
  number: number;
  t0: number;
  seen: Set<number>;
  latencies: number[];
  expected: number;
  resolve(): void;
}

const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const ms = (value: number) => Math.round(value * 100) / 100;

export async function measureFanOut(
  backends: Backends,
  options: { levels: number[]; submissions: number; warmup: number; say(line: string): void; label?: string },
): Promise<{ levels: FanOutLevel[]; memory: StreamMemory | undefined }> {
  const deployment = await deploy(`${options.label ? `${options.label.trim()}-` : ''}fanout`, backends, { apiCount: 2, apiNodeArgs: GC_HOOK });
  const streams: WorkStream[] = [];
  try {
    const { admin, apis } = deployment;
    const location = await admin.createLocation('Bench fan-out');
    const keys = await inBatches(KEYS, 4, (i) => admin.createServiceSession(location.id, `bench-register-${i}`));
    const customer = new CustomerClient(apis[0]!.baseUrl, (await admin.createCustomerSession(location.id, 1)).apiKey);
    const register = new RegisterClient({ baseUrl: apis[0]!.baseUrl, apiKey: keys[0]!.apiKey });

    let pending: Pending | undefined;
    const onOrder = (index: number, number: number, state: string) => {
      const p = pending;
      if (!p || number !== p.number || state !== 'PLACED' || p.seen.has(index)) return;
      p.seen.add(index);
      p.latencies.push(performance.now() - p.t0);
      if (p.seen.size === p.expected) p.resolve();
    };

    const openStream = (index: number) =>
      new Promise<void>((resolve, reject) => {
        const api = apis[index % apis.length]!;
        const client = new RegisterClient({ baseUrl: api.baseUrl, apiKey: keys[index % KEYS]!.apiKey });
        const stream = client.openStream({
          onOrder: (o) => onOrder(index, o.number, o.state),
          onState: (s) => {
            if (s.state === 'open') resolve();
            if (s.state === 'disconnected' && s.error) reject(s.error);
          },
        });
        streams.push(stream);
      });

    /** One submission: an order made and finished beforehand, timed from its submit. */
    const submit = async (number: number, expected: number): Promise<number[]> => {
      let resolve!: () => void;
      const all = new Promise<void>((r) => (resolve = r));
      pending = { number, t0: performance.now(), seen: new Set(), latencies: [], expected, resolve };
      const p = pending;
      await customer.submit(number);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise<void>((r) => (timer = setTimeout(r, 15_000)))]);
      clearTimeout(timer);
      pending = undefined;
      return p.latencies;
    };

    let before: Map<string, number>[] | undefined;
    const levels: FanOutLevel[] = [];
    let memory: StreamMemory | undefined;
    for (const level of options.levels) {
      const opened = Date.now();
      const from = streams.length;
      await inBatches(level - from, 50, (i) => openStream(from + i));
      options.say(`fan-out: ${level} streams open (${Date.now() - opened} ms to open ${level - from})`);

      if (before && level === Math.max(...options.levels)) {
        await collectGarbage(apis);
        const after = await Promise.all(apis.map((a) => scrapeMetrics(a.origin)));
        memory = memoryOf(before, after);
      }

      const count = options.warmup + options.submissions;
      const orders = await inBatches(count, 1, async () => {
        const order = await customer.createOrder(ROWS);
        await customer.finish(order.number);
        return order.number;
      });
      const latencies: number[] = [];
      const lastArrivals: number[] = [];
      let missed = 0;
      let cpu: ReturnType<typeof measureCpu> | undefined;
      const probe = deployment.probe();
      for (const [i, number] of orders.entries()) {
        if (i === options.warmup) {
          await probe.start();
          cpu = measureCpu(backends.redisProcesses);
        }
        const arrived = await submit(number, level);
        if (i < options.warmup) continue;
        latencies.push(...arrived);
        missed += level - arrived.length;
        if (arrived.length === level) lastArrivals.push(Math.max(...arrived));
      }
      const redisCpu = cpu?.stop() ?? [];
      const cost = await probe.stop(options.submissions);
      // Completed orders are not replayed to the next level's new streams.
      await inBatches(orders.length, 8, (i) => register.updateStatus(orders[i]!, 'COMPLETED'));
      latencies.sort((a, b) => a - b);
      lastArrivals.sort((a, b) => a - b);
      const result: FanOutLevel = {
        streams: level,
        apiNodes: apis.length,
        submissions: options.submissions,
        samples: latencies.length,
        missed,
        p50Ms: ms(percentile(latencies, 50)),
        p99Ms: ms(percentile(latencies, 99)),
        maxMs: ms(latencies.at(-1) ?? 0),
        lastArrivalP50Ms: ms(percentile(lastArrivals, 50)),
        redisCpu,
        cost,
      };
      levels.push(result);
      if (!before) {
        // The baseline: the first level's streams open and its code paths warm, so that the
        // growth to the last level is what the added streams cost, not one-time set-up.
        await collectGarbage(apis);
        before = await Promise.all(apis.map((a) => scrapeMetrics(a.origin)));
      }
      options.say(`${options.label ?? ''}fan-out ${level} streams: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, last arrival p50 ${result.lastArrivalP50Ms} ms, missed ${missed}`);
    }
    return { levels, memory };
  } finally {
    await Promise.all(streams.map((s) => s.close()));
    await stopQuietly(deployment);
  }
}

function memoryOf(before: Map<string, number>[], after: Map<string, number>[]): StreamMemory {
  const sample = (m: Map<string, number>, name: string) => m.get(name) ?? 0;
  const growth = before.map((b, i) => {
    const a = after[i]!;
    const streams = sample(a, 'pos_streams_open');
    const added = streams - sample(b, 'pos_streams_open');
    return {
      streams,
      rss: (sample(a, 'process_resident_memory_bytes') - sample(b, 'process_resident_memory_bytes')) / added,
      heap: (sample(a, 'nodejs_heap_size_used_bytes') - sample(b, 'nodejs_heap_size_used_bytes')) / added,
      node: {
        streamsBefore: sample(b, 'pos_streams_open'),
        streams,
        rssBeforeMiB: mib(sample(b, 'process_resident_memory_bytes')),
        rssAfterMiB: mib(sample(a, 'process_resident_memory_bytes')),
        heapUsedBeforeMiB: mib(sample(b, 'nodejs_heap_size_used_bytes')),
        heapUsedAfterMiB: mib(sample(a, 'nodejs_heap_size_used_bytes')),
      },
    };
  });
  const kib = (values: number[]) => Math.round((values.reduce((s, v) => s + v, 0) / values.length / 1024) * 10) / 10;
  return {
    streams: growth.reduce((s, g) => s + g.streams, 0),
    nodes: growth.map((g) => g.node),
    rssPerStreamKiB: kib(growth.map((g) => g.rss)),
    heapPerStreamKiB: kib(growth.map((g) => g.heap)),
  };
}

async function stopQuietly(deployment: Deployment): Promise<void> {
  await deployment.stop().catch(() => undefined);
}
