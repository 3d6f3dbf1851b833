import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { mongoCommandsCounter } from '@pos/shared/metrics/mongo-commands';
import { processMetrics } from '@pos/shared/metrics/process-metrics';
import type { TransitionQueues } from '@pos/shared/queue/transition-queue';
import { withTimeout } from '@pos/shared/util/timeout';
import { boundedRead, SCRAPE_READ_TIMEOUT_MS } from './scrape-read';

/** BullMQ job states reported as queue depth. */
export const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'completed',
  'failed',
] as const;

/** Seconds; from a fast cache read to the 10 s job deadline and the 1.5 s 401 delay. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Seconds; one stream's write to ten thousand on a busy machine. */
const FANOUT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** What the scrape-time gauges read; absent ones are not reported. */
export interface MetricSources {
  queues?: Pick<TransitionQueues, 'jobCounts' | 'oldestWaiting'>;
  subscriber?: { readonly channelCount: number };
  /** MongoDB commands this process has sent (the store's count). */
  mongoCommands?: () => number;
}

/**
 * The API node's Prometheus metrics, one registry per node (several nodes can share a process
 * in tests). Served at GET /metrics.
 */
export interface ApiMetrics {
  registry: Registry;
  /** Event streams open on this node (the hub's count, read at scrape time; 0 before `observeHub`). */
  streamsOpen: Gauge;
  /** Makes `streamsOpen` report this hub's streams (the hub calls it: it is built after the metrics). */
  observeHub(hub: { readonly openStreams: number }): void;
  /** Streams that ended on this node, by reason (`slow-client`: dropped for not reading fast enough). */
  streamsEnded: Counter<'reason'>;
  /** Location events this node received from Redis pub/sub, by type. */
  eventsReceived: Counter<'type'>;
  /** Events written to streams (one per stream), by type. */
  eventsDelivered: Counter<'type'>;
  /** From an event's publication to this node's last write of it to its streams, seconds. */
  fanOut: Histogram;
  /** Re-reads after a Redis reconnect this node finished (every waiting location read, batch by batch). */
  streamResyncs: Counter;
  /** Batches of locations those re-reads read (three MongoDB commands each), by outcome (`read`, `failed`). */
  streamResyncBatches: Counter<'outcome'>;
  /** Location events this node published (orders and commands it created), by type. */
  eventsPublished: Counter<'type'>;
  /** Requests answered, by method, matched route pattern and status. */
  httpRequests: Counter<'method' | 'route' | 'status'>;
  /** Request duration in seconds, same labels (a stream's is its whole life). */
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Enqueue-to-reply time of the jobs this node waited for, by job name and outcome status. */
  jobDuration: Histogram<'job' | 'status'>;
  /** Requests made with keys of the unsigned shape issued before keys were signed, by outcome. */
  unsignedKeyRequests: Counter<'outcome'>;
  /** Audit records of operator writes, by outcome: written, or failed (the write answered anyway). */
  auditWrites: Counter<'outcome'>;
  /** Requests refused under overload, by reason (`in-flight`, `queue`) and route pattern. */
  requestsShed: Counter<'reason' | 'route'>;
  /** Carts priced from a menu, by outcome (`priced`, `refused`: a 422 `Menu mismatch`). */
  menuCarts: Counter<'outcome'>;
  /** Menu documents this node read from MongoDB because it did not hold them (docs/menu.md). */
  menuDocumentReads: Counter;
}

/** A counter or a histogram of the node, as data. */
interface MetricSpec {
  name: string;
  help: string;
  labelNames?: readonly string[];
  buckets?: number[];
  /** Label values whose series exist from the start, at 0 ("none accepted" reads as a 0, not as a missing series). */
  zeros?: readonly Record<string, string>[];
}

const COUNTERS = {
  requestsShed: {
    name: 'pos_requests_shed_total',
    help:
      'Requests refused at once under overload (503, Retry-After), by reason (in-flight: the ' +
      "node's HTTP_MAX_IN_FLIGHT; queue: a partition's admission) and route pattern",
    labelNames: ['reason', 'route'],
  },
  streamsEnded: {
    name: 'pos_streams_ended_total',
    help: 'Event streams that ended on this node, by reason (slow-client: dropped for not reading fast enough)',
    labelNames: ['reason'],
  },
  eventsReceived: {
    name: 'pos_events_received_total',
    help: 'Location events received from Redis pub/sub',
    labelNames: ['type'],
  },
  eventsDelivered: {
    name: 'pos_events_delivered_total',
    help: 'Events written to streams, one per stream',
    labelNames: ['type'],
  },
  streamResyncs: {
    name: 'pos_stream_resyncs_total',
    help: 'Re-reads of the streams after a Redis reconnect that this node finished',
  },
  streamResyncBatches: {
    name: 'pos_stream_resync_batches_total',
    help: 'Batches of locations read by those re-reads (three MongoDB commands each), by outcome',
    labelNames: ['outcome'],
  },
  eventsPublished: {
    name: 'pos_events_published_total',
    help: 'Location events published by this node',
    labelNames: ['type'],
  },
  httpRequests: {
    name: 'pos_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
  },
  unsignedKeyRequests: {
    name: 'pos_unsigned_key_requests_total',
    help:
      'Requests made with unsigned API keys (the shape issued before keys ' +
      'were signed), by outcome: accepted or rejected',
    labelNames: ['outcome'],
    zeros: [{ outcome: 'accepted' }, { outcome: 'rejected' }],
  },
  auditWrites: {
    name: 'pos_audit_writes_total',
    help: 'Audit records of operator writes, by outcome: written, or failed (logged; the write was answered anyway)',
    labelNames: ['outcome'],
    zeros: [{ outcome: 'written' }, { outcome: 'failed' }],
  },
  menuCarts: {
    name: 'pos_menu_carts_total',
    help: "Carts priced from a location's menu, by outcome: priced, or refused (a 422 Menu mismatch)",
    labelNames: ['outcome'],
    zeros: [{ outcome: 'priced' }, { outcome: 'refused' }],
  },
  menuDocumentReads: {
    name: 'pos_menu_document_reads_total',
    help:
      'Menu documents this node read from MongoDB because it did not hold ' +
      'them (at steady state it holds the menus it serves)',
  },
} as const satisfies Record<string, MetricSpec>;

const HISTOGRAMS = {
  fanOut: {
    name: 'pos_fanout_seconds',
    help: "From a location event's publication (publisher's clock) to this node's last write of it to its streams",
    buckets: FANOUT_BUCKETS,
  },
  httpDuration: {
    name: 'pos_http_request_duration_seconds',
    help: 'HTTP request duration, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
  },
  jobDuration: {
    name: 'pos_job_duration_seconds',
    help: 'Time from enqueueing a job to its outcome (worker reply, job look-up or deadline), by job and status',
    labelNames: ['job', 'status'],
    buckets: LATENCY_BUCKETS,
  },
} as const satisfies Record<string, MetricSpec>;

type LabelsOf<S> = S extends { labelNames: readonly (infer L extends string)[] } ? L : string;
type Counters = { [K in keyof typeof COUNTERS]: Counter<LabelsOf<(typeof COUNTERS)[K]>> };
type Histograms = { [K in keyof typeof HISTOGRAMS]: Histogram<LabelsOf<(typeof HISTOGRAMS)[K]>> };

function counters(registry: Registry): Counters {
  const made = Object.entries(COUNTERS).map(([key, spec]: [string, MetricSpec]) => {
    const counter = new Counter({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labelNames ?? [],
      registers: [registry],
    });
    for (const labels of spec.zeros ?? []) counter.inc(labels, 0);
    return [key, counter];
  });
  return Object.fromEntries(made) as Counters;
}

function histograms(registry: Registry): Histograms {
  const made = Object.entries(HISTOGRAMS).map(([key, spec]: [string, MetricSpec]) => [
    key,
    new Histogram({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labelNames ?? [],
      buckets: spec.buckets,
      registers: [registry],
    }),
  ]);
  return Object.fromEntries(made) as Histograms;
}

/** The gauges read at scrape time from what the node shares with the others (the queues) and holds (its channels). */
function scrapedGauges(registry: Registry, { queues, subscriber }: MetricSources): void {
  const registers = [registry];
  if (queues) {
    new Gauge({
      name: 'pos_queue_jobs',
      help: 'Jobs in the transition queue by state, over all its partitions (shared by every node, read at scrape time)',
      labelNames: ['state'],
      registers,
      async collect() {
        this.reset();
        // Redis down (BullMQ would wait for it): no values rather than stale ones; /readyz says why.
        const counts = await boundedRead(queues.jobCounts(...QUEUE_STATES), 'queue job counts');
        if (counts) for (const state of QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
      },
    });
    new Gauge({
      name: 'pos_queue_oldest_waiting_seconds',
      help:
        'How long the oldest job waiting in the transition queue has waited, over all its ' +
        'partitions (0: none waits; shared by every node, read at scrape time)',
      registers,
      async collect() {
        this.reset();
        try {
          const oldest = await withTimeout(queues.oldestWaiting(), SCRAPE_READ_TIMEOUT_MS, 'oldest waiting job');
          this.set(oldest === undefined ? 0 : Math.max(0, Date.now() - oldest) / 1000);
        } catch {
          // as pos_queue_jobs: no value rather than a stale one
        }
      },
    });
  }
  if (subscriber) {
    new Gauge({
      name: 'pos_pubsub_channels',
      help: 'Redis pub/sub channels this node is subscribed to (locations with streams, plus its reply channel)',
      registers,
      collect() {
        this.set(subscriber.channelCount);
      },
    });
  }
}

export function createApiMetrics(sources: MetricSources = {}): ApiMetrics {
  const registry = new Registry();
  processMetrics(registry);
  if (sources.mongoCommands) mongoCommandsCounter(registry, sources.mongoCommands);
  scrapedGauges(registry, sources);
  let hub: { readonly openStreams: number } | undefined;
  return {
    registry,
    ...counters(registry),
    ...histograms(registry),
    streamsOpen: new Gauge({
      name: 'pos_streams_open',
      help: 'Event streams open on this node',
      registers: [registry],
      collect() {
        this.set(hub?.openStreams ?? 0);
      },
    }),
    observeHub(observed) {
      hub = observed;
    },
  };
}
