/**
 * The features measured as cost rows of their own (`VARIANTS` in bench/run.ts): each a deployment
 * with the feature's settings, and the local endpoint it talks to, in this process.
 *  - webhooks: one subscription to every event type on every location, delivered to a receiver
 *    answering 204 (WEBHOOK_ALLOW_PRIVATE: it is on 127.0.0.1); a run's cost includes its
 *    deliveries (its probe waits until they have stopped coming).
 *  - tracing: every trace kept and exported over OTLP/HTTP to a sink answering 200.
 * Presence is always on (its cost is in every row: bench/presence-cost.ts isolates it), and the
 * audit trail is written by admin writes only, never on a register's or customer's request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WEBHOOK_EVENT_TYPES } from '@pos/shared/webhooks/event-types';
import type { Variant } from './service-load';

/** A local HTTP endpoint that answers every request with `status` and counts what it got. */
class Sink {
  requests = 0;
  bytes = 0;
  private lastAt = 0;
  private readonly server: http.Server;

  private constructor(status: number) {
    this.server = http.createServer((req, res) => {
      req.on('data', (chunk: Buffer) => (this.bytes += chunk.length));
      req.on('end', () => {
        this.requests += 1;
        this.lastAt = Date.now();
        res.writeHead(status).end();
      });
    });
  }

  static async start(status: number): Promise<Sink> {
    const sink = new Sink(status);
    await new Promise<void>((resolve) => sink.server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once nothing has arrived for `quietMs` (at most `maxMs`): the deliveries a run caused are in. */
  async quiet(quietMs = 500, maxMs = 30_000): Promise<void> {
    const until = Date.now() + maxMs;
    while (Date.now() < until && Date.now() - this.lastAt < quietMs) await new Promise((resolve) => setTimeout(resolve, 100));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export async function startFeatureVariants(): Promise<{ variants: Variant[]; stop(): Promise<void> }> {
  const receiver = await Sink.start(204);
  const otlp = await Sink.start(200);
  const variants: Variant[] = [
    {
      name: 'webhooks',
      env: { WEBHOOK_ALLOW_PRIVATE: '1' },
      async setup(deployment) {
        await deployment.admin.createWebhook({ url: `${receiver.origin}/hooks`, events: WEBHOOK_EVENT_TYPES });
      },
      settled: () => receiver.quiet(),
    },
    { name: 'tracing', env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.origin }, settled: () => otlp.quiet() },
  ];
  return {
    variants,
    async stop() {
      await Promise.all([receiver.close(), otlp.close()]);
    },
  };
}
