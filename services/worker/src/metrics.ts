import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { mongoCommandsCounter } from '@pos/shared/metrics/mongo-commands';

export interface WorkerMetrics {
  registry: Registry;
  /** Jobs this worker finished, by job name and outcome status. */
  jobsProcessed: Counter<'job' | 'status'>;
}

/**
 * The worker's Prometheus metrics: the process (CPU, memory, event loop), the MongoDB commands
 * it sent, the jobs it finished. Served on METRICS_PORT when that is set.
 */
export function createWorkerMetrics(mongoCommands: () => number): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  mongoCommandsCounter(registry, mongoCommands);
  const jobsProcessed = new Counter({
    name: 'pos_jobs_processed_total',
    help: 'Jobs this worker finished, by job name and outcome status',
    labelNames: ['job', 'status'],
    registers: [registry],
  });
  return { registry, jobsProcessed };
}

/** GET /metrics on its own listener (nothing else is served); resolves with the port. */
export async function serveMetrics(registry: Registry, port: number, host: string): Promise<{ port: number; server: http.Server }> {
  const server = http.createServer((req, res) => {
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
