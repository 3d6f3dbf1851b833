/**
 * The Koa ceiling: the same framework and router as the API, one JSON route, no authentication,
 * no MongoDB. `GET /orders/location?n=N` answers N order records (built once per N), so it can
 * serve the same bytes as the service's location poll.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { sampleOrderRecords } from '../../scripts/embedded/sample-rows';

async function main(): Promise<void> {
  const app = new Koa();
  const router = new Router();
  const payloads = new Map<number, unknown>();
  router.get('/orders/location', (ctx) => {
    const n = Math.min(Number(ctx.query.n ?? 0) || 0, 10_000);
    let body = payloads.get(n);
    if (!body) {
      body = sampleOrderRecords(n);
      payloads.set(n, body);
    }
    ctx.body = body;
  });
  app.use(router.routes());
  const server = http.createServer(app.callback());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  process.stdout.write(`${JSON.stringify({ msg: 'bare koa listening', port: (server.address() as AddressInfo).port })}\n`);
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

void main();
