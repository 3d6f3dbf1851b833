import { buildInfo } from '@pos/shared/build-info';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { mongoCommandsCounter } from '@pos/shared/metrics/mongo-commands';
import { processMetrics } from '@pos/shared/metrics/process-metrics';

export interface WorkerMetrics {
  registry: Registry;
  /** Jobs this worker finished, by job name and outcome status. */
  jobsProcessed: Counter<'job' | 'status'>;
  /** Failure thresholds answered, by where from: `cache` or `mongodb`. */
  thresholds: Counter<'from'>;
  webhooks: WebhookMetrics;
  relay: RelayMetrics;
}

export interface RelayMetrics {
  /** Events this worker recorded in the event log. */
  recorded: Counter;
  /** From a change's write to its event's recording. */
  lagSeconds: Histogram;
  /** Deliveries added again from the event log: after Redis lost its data, or by the periodic check. */
  restored: Counter<'reason'>;
  /** 1 while this worker holds the relay's lease. */
  leader: Gauge;
  /** What the relay's last read found waiting: how many events, and the oldest's age. */
  backlog: Gauge;
  backlogOldest: Gauge;
}

export interface WebhookMetrics {
  /**
   * Delivery attempts by outcome: delivered, retrying, failed (its schedule
   * ran out), disabled (it disabled the endpoint).
   */
  deliveries: Counter<'outcome'>;
  deliverySeconds: Histogram;
  /** Deliveries held back unattempted by their endpoint's share: `endpoint-busy`, `circuit-open`. */
  held: Counter<'reason'>;
}

/**
 * The worker's Prometheus metrics: the process (CPU, memory, event loop), the MongoDB commands
 * it sent, the jobs it finished. Served on METRICS_PORT when that is set.
 */
export function createWorkerMetrics(mongoCommands: () => number): WorkerMetrics {
  const registry = new Registry();
  processMetrics(registry);
  mongoCommandsCounter(registry, mongoCommands);
  const jobsProcessed = new Counter({
    name: 'pos_jobs_processed_total',
    help: 'Jobs this worker finished, by job name and outcome status',
    labelNames: ['job', 'status'],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'pos_webhook_deliveries_total',
    help:
      'Webhook delivery attempts, by outcome: delivered, retrying, failed (the retry ' +
      'schedule ran out), disabled (the attempt disabled the endpoint)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const deliverySeconds = new Histogram({
    name: 'pos_webhook_delivery_seconds',
    help: "Time of one webhook delivery attempt, from the address check to the endpoint's answer",
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const held = labelledCounter(
    registry,
    'pos_webhook_deliveries_held_total',
    'Webhook deliveries put back on the queue unattempted, by reason: endpoint-busy (its endpoint had WEBHOOK_ENDPOINT_CONCURRENCY attempts under way), circuit-open',
    'reason',
    ['endpoint-busy', 'circuit-open'],
  );
  const thresholds = labelledCounter(
    registry,
    'pos_failure_thresholds_total',
    'Failure thresholds a failure report used, by where from: cache (this ' +
      "worker's, kept until the location changes), mongodb (read)",
    'from',
    ['cache', 'mongodb'],
  );
  return {
    registry,
    jobsProcessed,
    thresholds,
    webhooks: { deliveries, deliverySeconds, held },
    relay: relayMetrics(registry),
  };
}

/** A counter of one label, each of its values shown from the start (at 0, before anything counts). */
function labelledCounter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  label: L,
  values: string[],
): Counter<L> {
  const counter = new Counter({ name, help, labelNames: [label], registers: [registry] });
  for (const value of values) counter.inc({ [label]: value } as Record<L, string>, 0);
  return counter;
}

function relayMetrics(registry: Registry): RelayMetrics {
  const restored = labelledCounter(
    registry,
    'pos_event_deliveries_restored_total',
    'Webhook deliveries added to the queue again from the event log, by reason: redis-lost ' +
      '(the queue had lost its data), check (the periodic check of recent events)',
    'reason',
    ['redis-lost', 'check'],
  );
  return {
    recorded: new Counter({
      name: 'pos_events_recorded_total',
      help: 'Events this worker, relaying, added to the event log',
      registers: [registry],
    }),
    lagSeconds: new Histogram({
      name: 'pos_event_relay_lag_seconds',
      help: "Time from a change's write to its event's recording in the event log",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60],
      registers: [registry],
    }),
    restored,
    leader: new Gauge({
      name: 'pos_event_relay_leader',
      help: "1 while this worker holds the event relay's lease",
      registers: [registry],
    }),
    backlog: new Gauge({
      name: 'pos_event_relay_backlog_events',
      help:
        "Events waiting in the outboxes as the relay's last read found them (at least as many " +
        'when a read filled its batch); 0 on a worker that does not relay',
      registers: [registry],
    }),
    backlogOldest: new Gauge({
      name: 'pos_event_relay_backlog_oldest_seconds',
      help:
        "Age of the oldest event the relay's last read found waiting; 0 when " +
        'none waits, and on a worker that does not relay',
      registers: [registry],
    }),
  };
}

/** `pos_webhook_circuits_open`: the endpoints whose circuit is open on this worker, read at scrape time. */
export function circuitsOpenGauge(registry: Registry, open: () => number): Gauge {
  return new Gauge({
    name: 'pos_webhook_circuits_open',
    help: 'Webhook endpoints whose circuit this worker holds open (WEBHOOK_CIRCUIT_FAILURES failed attempts in a row)',
    registers: [registry],
    collect() {
      this.set(open());
    },
  });
}

/**
 * GET /metrics on its own listener, and GET /healthz (the process answers: a liveness probe, with
 * the release and commit it runs, as the API's); nothing else. Resolves with the port.
 */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host: string,
): Promise<{ port: number; server: http.Server }> {
  const health = JSON.stringify({ status: 'ok', ...buildInfo() });
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(health);
      return;
    }
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, server };
}
