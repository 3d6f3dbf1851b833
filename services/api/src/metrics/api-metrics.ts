import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { mongoCommandsCounter } from '@pos/shared/metrics/mongo-commands';
import { processMetrics } from '@pos/shared/metrics/process-metrics';
import type { TransitionQueues } from '@pos/shared/queue/transition-queue';
import { withDeadline } from '@pos/shared/util/deadline';
import { boundedRead, SCRAPE_READ_TIMEOUT_MS } from './scrape-read';

/** BullMQ job states reported as queue depth. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

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
}

export function createApiMetrics(sources: MetricSources = {}): ApiMetrics {
  const registry = new Registry();
  processMetrics(registry);

  const { queues, subscriber, mongoCommands } = sources;
  if (mongoCommands) mongoCommandsCounter(registry, mongoCommands);
  if (queues) {
    new Gauge({
      name: 'pos_queue_jobs',
      help: 'Jobs in the transition queue by state, over all its partitions (shared by every node, read at scrape time)',
      labelNames: ['state'],
      registers: [registry],
      async collect() {
        this.reset();
        // Redis down (BullMQ would wait for it): no values rather than stale ones; /readyz says why.
        const counts = await boundedRead(queues.jobCounts(...QUEUE_STATES), 'queue job counts');
        if (counts) for (const state of QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
      },
    });
  }
  if (queues) {
    new Gauge({
      name: 'pos_queue_oldest_waiting_seconds',
      help: 'How long the oldest job waiting in the transition queue has waited, over all its partitions (0: none waits; shared by every node, read at scrape time)',
      registers: [registry],
      async collect() {
        this.reset();
        try {
          const oldest = await withDeadline(queues.oldestWaiting(), SCRAPE_READ_TIMEOUT_MS, 'oldest waiting job');
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
      registers: [registry],
      collect() {
        this.set(subscriber.channelCount);
      },
    });
  }

  let hub: { readonly openStreams: number } | undefined;

  const unsignedKeyRequests = new Counter({
    name: 'pos_unsigned_key_requests_total',
    help: 'Requests made with unsigned API keys (the shape issued before keys were signed), by outcome: accepted or rejected',
    labelNames: ['outcome'],
    registers: [registry],
  });
  // Both series from the start: "no unsigned key accepted" reads as a 0, not as a missing series.
  for (const outcome of ['accepted', 'rejected']) unsignedKeyRequests.inc({ outcome }, 0);
  const auditWrites = new Counter({
    name: 'pos_audit_writes_total',
    help: 'Audit records of operator writes, by outcome: written, or failed (logged; the write was answered anyway)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ['written', 'failed']) auditWrites.inc({ outcome }, 0);

  return {
    registry,
    requestsShed: new Counter({
      name: 'pos_requests_shed_total',
      help: 'Requests refused at once under overload (503, Retry-After), by reason (in-flight: the node\'s HTTP_MAX_IN_FLIGHT; queue: a partition\'s admission) and route pattern',
      labelNames: ['reason', 'route'],
      registers: [registry],
    }),
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
    streamsEnded: new Counter({
      name: 'pos_streams_ended_total',
      help: 'Event streams that ended on this node, by reason (slow-client: dropped for not reading fast enough)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    eventsReceived: new Counter({
      name: 'pos_events_received_total',
      help: 'Location events received from Redis pub/sub',
      labelNames: ['type'],
      registers: [registry],
    }),
    eventsDelivered: new Counter({
      name: 'pos_events_delivered_total',
      help: 'Events written to streams, one per stream',
      labelNames: ['type'],
      registers: [registry],
    }),
    fanOut: new Histogram({
      name: 'pos_fanout_seconds',
      help: "From a location event's publication (publisher's clock) to this node's last write of it to its streams",
      buckets: FANOUT_BUCKETS,
      registers: [registry],
    }),
    streamResyncs: new Counter({
      name: 'pos_stream_resyncs_total',
      help: 'Re-reads of the streams after a Redis reconnect that this node finished',
      registers: [registry],
    }),
    streamResyncBatches: new Counter({
      name: 'pos_stream_resync_batches_total',
      help: 'Batches of locations read by those re-reads (three MongoDB commands each), by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    eventsPublished: new Counter({
      name: 'pos_events_published_total',
      help: 'Location events published by this node',
      labelNames: ['type'],
      registers: [registry],
    }),
    httpRequests: new Counter({
      name: 'pos_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'pos_http_request_duration_seconds',
      help: 'HTTP request duration, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: 'pos_job_duration_seconds',
      help: 'Time from enqueueing a job to its outcome (worker reply, job look-up or deadline), by job and status',
      labelNames: ['job', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    unsignedKeyRequests,
    auditWrites,
  };
}
