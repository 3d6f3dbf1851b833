/**
 * The features measured as cost rows of their own, each a deployment with its settings and the
 * local endpoint it talks to. webhooks: one subscription to every event, delivered to a receiver
 * that verifies every signature, at 16 and 64 clients, each against its own floor (the status
 * floor POSTing each update's events); a run's cost includes its deliveries. tracing: every
 * trace kept and exported over OTLP/HTTP.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_EVENT_TYPES } from '@pos/shared/webhooks/event-types';
import { newWebhookSecret } from '@pos/shared/webhooks/secrets';
import { type Deployment, scrapeMetrics } from './deployment';
import type { Variant } from './service-load';

/**
 * A local endpoint answering `status`; it verifies the signatures of the paths it
 * has secrets for, counting the distinct `webhook-id`s.
 */
class Sink {
  readonly verified = new Map<string, Set<string>>();
  readonly secrets = new Map<string, Webhook>();
  invalid = 0;
  private lastAt = 0;
  private readonly server: http.Server;

  constructor(status: number) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.lastAt = Date.now();
        this.verify(req, Buffer.concat(chunks).toString());
        res.writeHead(status).end();
      });
    });
  }

  private verify(req: http.IncomingMessage, body: string): void {
    const signer = this.secrets.get(req.url ?? '');
    if (!signer) return;
    const [id, timestamp, signature] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) =>
      String(req.headers[name] ?? ''),
    );
    try {
      signer.verify(body, { 'webhook-id': id!, 'webhook-timestamp': timestamp!, 'webhook-signature': signature! });
      this.verified.set(req.url!, (this.verified.get(req.url!) ?? new Set<string>()).add(id!));
    } catch {
      this.invalid += 1;
    }
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once nothing has arrived for `quietMs` (at most `maxMs`): the deliveries a run caused are in. */
  async quiet(quietMs = 500, maxMs = 30_000): Promise<void> {
    const until = Date.now() + maxMs;
    while (Date.now() < until && Date.now() - this.lastAt < quietMs)
      await new Promise((resolve) => setTimeout(resolve, 100));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export async function startFeatureVariants(): Promise<{ variants: Variant[]; stop(): Promise<void> }> {
  const receiver = await new Sink(204).listen();
  const otlp = await new Sink(200).listen();
  const floorSecret = newWebhookSecret();
  receiver.secrets.set('/floor', new Webhook(floorSecret));
  const verified = (path: string) => receiver.verified.get(path)?.size ?? 0;
  const recorded = async (deployment: Deployment) =>
    (await scrapeMetrics(`http://127.0.0.1:${deployment.worker.ready[1]}`)).get('pos_events_recorded_total') ?? 0;
  const variants: Variant[] = [
    {
      name: 'webhooks',
      env: { WEBHOOK_ALLOW_PRIVATE: '1' },
      concurrencies: [16, 64],
      floorEnv: { FLOOR_WEBHOOK_URL: `${receiver.origin}/floor`, FLOOR_WEBHOOK_SECRET: floorSecret },
      async setup(deployment) {
        const { secret } = await deployment.admin.createWebhook({
          url: `${receiver.origin}/hooks`,
          events: WEBHOOK_EVENT_TYPES,
        });
        receiver.secrets.set('/hooks', new Webhook(secret));
        receiver.verified.clear();
      },
      // the run's cost includes every delivery it caused: until each recorded event arrived, verified (at most 60 s)
      async settled(deployment) {
        const until = Date.now() + 60_000;
        while (Date.now() < until && (await recorded(deployment)) > verified('/hooks'))
          await new Promise((resolve) => setTimeout(resolve, 100));
      },
      report: async (deployment) => ({
        eventsRecorded: await recorded(deployment),
        delivered: verified('/hooks'),
        invalidSignatures: receiver.invalid,
        floorPosts: verified('/floor'),
      }),
    },
    { name: 'tracing', env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.origin }, settled: () => otlp.quiet() },
  ];
  return { variants, stop: () => Promise.all([receiver.close(), otlp.close()]).then(() => undefined) };
}
