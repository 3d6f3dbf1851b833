/**
 * The features measured as cost rows of their own (`VARIANTS` in bench/run.ts): each a deployment
 * with the feature's settings, and the local endpoint it talks to, in this process.
 *  - webhooks: one subscription to every event type on every location, delivered to a receiver
 *    answering 204 (WEBHOOK_ALLOW_PRIVATE: it is on 127.0.0.1) that verifies every signature; a
 *    run's cost includes its deliveries (its probe waits until they have stopped coming). At 16
 *    and 64 clients, each with its own floor: the status floor POSTing each update's events.
 *  - tracing: every trace kept and exported over OTLP/HTTP to a sink answering 200.
 * Presence is always on (its cost is in every row: bench/presence-cost.ts isolates it), and the
 * audit trail is written by admin writes only, never on a register's or customer's request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_EVENT_TYPES } from '@pos/shared/webhooks/event-types';
import { newWebhookSecret } from '@pos/shared/webhooks/secrets';
import { scrapeMetrics } from './deployment';
import type { Variant } from './service-load';

/**
 * A local HTTP endpoint that answers every request with `status` and counts what it got; given
 * the secrets of its paths, it verifies each request's signature with `standardwebhooks` and
 * counts the distinct `webhook-id`s that verified, per path.
 */
class Sink {
  requests = 0;
  bytes = 0;
  readonly verified = new Map<string, Set<string>>();
  invalid = 0;
  readonly secrets = new Map<string, Webhook>();
  private lastAt = 0;
  private readonly server: http.Server;

  private constructor(status: number) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => {
        this.bytes += chunk.length;
        chunks.push(chunk);
      });
      req.on('end', () => {
        this.requests += 1;
        this.lastAt = Date.now();
        this.verify(req, Buffer.concat(chunks).toString());
        res.writeHead(status).end();
      });
    });
  }

  private verify(req: http.IncomingMessage, body: string): void {
    const path = req.url ?? '';
    const signer = this.secrets.get(path);
    if (!signer) return;
    const header = (name: string) => String(req.headers[name] ?? '');
    try {
      signer.verify(body, { 'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature') });
      const ids = this.verified.get(path) ?? new Set<string>();
      ids.add(header('webhook-id'));
      this.verified.set(path, ids);
    } catch {
      this.invalid += 1;
    }
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
  const floorSecret = newWebhookSecret();
  receiver.secrets.set('/floor', new Webhook(floorSecret));
  const variants: Variant[] = [
    {
      name: 'webhooks',
      env: { WEBHOOK_ALLOW_PRIVATE: '1' },
      concurrencies: [16, 64],
      floorEnv: { FLOOR_WEBHOOK_URL: `${receiver.origin}/floor`, FLOOR_WEBHOOK_SECRET: floorSecret },
      async setup(deployment) {
        const { secret } = await deployment.admin.createWebhook({ url: `${receiver.origin}/hooks`, events: WEBHOOK_EVENT_TYPES });
        receiver.secrets.set('/hooks', new Webhook(secret));
        receiver.verified.clear();
      },
      settled: () => receiver.quiet(),
      // every event the deployment recorded, delivered under a signature that verifies
      async report(deployment) {
        const worker = await scrapeMetrics(`http://127.0.0.1:${deployment.worker.ready[1]}`);
        return {
          eventsRecorded: worker.get('pos_events_recorded_total') ?? 0,
          delivered: receiver.verified.get('/hooks')?.size ?? 0,
          invalidSignatures: receiver.invalid,
          floorPosts: receiver.verified.get('/floor')?.size ?? 0,
        };
      },
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
