import { Gauge, type Registry } from 'prom-client';
import type { InFlightLimit } from '../overload/in-flight';
import type { QueueAdmission } from '../overload/queue-admission';

/**
 * The node's admission, read at scrape time (docs/overload.md#seen-and-alerted): per partition of
 * the transition queue, the jobs in flight from this node, the limit they are held to, and the wait a new
 * job would have (the admission signal); and the node's requests in flight. The refusals themselves
 * are counted by `pos_requests_shed_total` (request-metrics.ts).
 */
export function registerOverloadMetrics(
  registry: Registry,
  sources: { admission: Pick<QueueAdmission, 'signals'>; inFlight: Pick<InFlightLimit, 'current'> },
): void {
  const partitionGauge = (
    name: string,
    help: string,
    read: (signal: ReturnType<QueueAdmission['signals']>[number]) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['partition'],
      registers: [registry],
      collect() {
        this.reset();
        for (const signal of sources.admission.signals())
          this.set({ partition: String(signal.partition) }, read(signal));
      },
    });
  partitionGauge(
    'pos_admission_queue_wait_seconds',
    "The wait a job admitted now would have in the partition's queue, as this node sees it (in flight " +
      '/ recent peak throughput; +Inf with jobs in flight and none finished lately)',
    (s) => s.waitEstimateSeconds,
  );
  partitionGauge(
    'pos_admission_in_flight',
    "This node's jobs in flight to the partition (admitted, not yet answered)",
    (s) => s.inFlight,
  );
  partitionGauge(
    'pos_admission_limit',
    'The jobs this node admits in flight to the partition: its recent peak ' +
      'throughput times QUEUE_WAIT_TARGET, at least QUEUE_ADMISSION_FLOOR',
    (s) => s.limit,
  );
  new Gauge({
    name: 'pos_http_in_flight',
    help: 'Requests this node is working on (event streams while they open), against HTTP_MAX_IN_FLIGHT',
    registers: [registry],
    collect() {
      this.set(sources.inFlight.current);
    },
  });
}
