/**
 * `npm run webhook-receiver`: a webhook endpoint on this machine, to try the service's webhooks
 * (docs/webhooks.md#try-it-locally) and to read as a receiver's reference: each delivery is
 * verified with the `standardwebhooks` package under WEBHOOK_SECRET (the raw body, before any
 * parsing), deduplicated by `webhook-id`, and an order event older than one already handled is
 * dropped (by the order's `version`). Each event it keeps is printed as one JSON line.
 *
 * Options: --port N (default 9099: none of the ports the docs give the service, 8080 and 9090),
 * --path P (default /hook). The secret is the one the subscription was created with
 * (`whsec_...`); during a rotation, both, comma-separated.
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '9099' }, path: { type: 'string', default: '/hook' } },
});
const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').filter(Boolean);
if (secrets.length === 0) {
  process.stderr.write("set WEBHOOK_SECRET to the subscription's secret (whsec_...)\n");
  process.exit(2);
}
const verifiers = secrets.map((secret) => new Webhook(secret));
/** Handled webhook-ids; a production receiver keeps them in a store with a TTL. */
const seen = new Set<string>();
/** The last version handled of each order (`locationId:number`). */
const versions = new Map<string, number>();

interface PosEvent {
  type: string;
  timestamp: string;
  data: { locationId?: string; order?: { number: number; version?: number } };
}

/**
 * The event, if one of the secrets signed this body and its timestamp is recent (standardwebhooks throws otherwise).
 */
function verify(body: string, headers: http.IncomingHttpHeaders): PosEvent | undefined {
  const flat = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));
  for (const verifier of verifiers) {
    try {
      return verifier.verify(body, flat) as PosEvent;
    } catch {
      // the next secret, during a rotation
    }
  }
  return undefined;
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== values.path) {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const event = verify(Buffer.concat(chunks).toString('utf8'), req.headers);
    if (!event) {
      res.writeHead(401).end();
      return;
    }
    const id = String(req.headers['webhook-id']);
    // Answer 2xx to a repeat as well: the service stops retrying what was handled.
    res.writeHead(204).end();
    if (seen.has(id)) return;
    seen.add(id);
    const order = event.data.order;
    if (order?.version !== undefined) {
      const key = `${event.data.locationId}:${order.number}`;
      if ((versions.get(key) ?? -1) > order.version) return; // overtaken by a later state
      versions.set(key, order.version);
    }
    process.stdout.write(`${JSON.stringify({ webhookId: id, ...event })}\n`);
  });
});
server.on('error', (err: NodeJS.ErrnoException) => {
  // a port in use is the usual mistake, not a stack trace
  if (err.code === 'EADDRINUSE')
    process.stderr.write(
      `webhook receiver: port ${values.port} is in use (another receiver, or a ` +
        `service listening there); choose another with --port\n`,
    );
  else process.stderr.write(`webhook receiver: ${err.message}\n`);
  process.exit(1);
});
server.listen(Number(values.port), () =>
  process.stderr.write(`webhook receiver listening on http://localhost:${values.port}${values.path}\n`),
);
