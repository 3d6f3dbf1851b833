/**
 * A webhook endpoint for tests: real HTTP on 127.0.0.1, every request verified with the
 * `standardwebhooks` package (as a receiver would) under the secrets it is told, and kept.
 * What it answers is set per test: a status, a hang (no answer), or down (not listening).
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  type: string;
  data: Record<string, unknown>;
  /** The secrets (of those the receiver knows) that verified the request. */
  verifiedBy: string[];
}

export type ReceiverMode = { status: number } | 'hang' | 'down';

export interface Receiver {
  url: string;
  /** Every request, in arrival order (also the unverified ones: `verifiedBy` is then empty). */
  received: ReceivedWebhook[];
  /** The requests answered 2xx, one per webhook-id (the receiver's dedupe). */
  delivered(): Map<string, ReceivedWebhook>;
  secrets: string[];
  setMode(mode: ReceiverMode): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(secrets: string[] = []): Promise<Receiver> {
  let mode: ReceiverMode = { status: 204 };
  const received: ReceivedWebhook[] = [];
  const answered2xx = new Set<number>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      };
      const verifiedBy = receiver.secrets.filter((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      const parsed = JSON.parse(body) as { type: string; data: Record<string, unknown> };
      const index =
        received.push({
          id: headers['webhook-id'],
          timestamp: headers['webhook-timestamp'],
          signature: headers['webhook-signature'],
          body,
          type: parsed.type,
          data: parsed.data,
          verifiedBy,
        }) - 1;
      if (mode === 'hang') {
        hanging.add(res);
        return;
      }
      // An unverified request is refused, as a receiver would: the service must retry it.
      const status = verifiedBy.length === 0 ? 401 : typeof mode === 'object' ? mode.status : 500;
      if (status >= 200 && status < 300) answered2xx.add(index);
      res.writeHead(status).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    secrets,
    delivered() {
      const byId = new Map<string, ReceivedWebhook>();
      for (const index of answered2xx) byId.set(received[index]!.id, received[index]!);
      return byId;
    },
    async setMode(next) {
      if (next === 'down' && mode !== 'down') {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      } else if (next !== 'down' && mode === 'down') {
        server.listen(port, '127.0.0.1');
        await once(server, 'listening');
      }
      mode = next;
    },
    async close() {
      for (const res of hanging) res.destroy();
      if (mode !== 'down') {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
  return receiver;
}
