/**
 * A memory floor for open event streams: a bare server that answers every request with the head
 * of an event stream and holds the response open, as the API does, and reports its memory after
 * a full GC. `node` answers with Node's http alone; `koa` through a Koa app (the API's framework),
 * its handler returning once the head is written.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

export type HeldReply = { port: number } | { open: number; rss: number; heapUsed: number };

const mode = process.argv[2] === 'koa' ? 'koa' : 'node';
let open = 0;

function hold(res: http.ServerResponse): void {
  open += 1;
  res.shouldKeepAlive = false;
  res.useChunkedEncodingByDefault = false;
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  res.socket?.write('retry: 1000\n\n');
  res.once('close', () => (open -= 1));
}

async function main(): Promise<void> {
  let handler: http.RequestListener;
  if (mode === 'koa') {
    const app = new Koa();
    app.use(async (ctx) => {
      ctx.respond = false;
      hold(ctx.res);
    });
    handler = app.callback();
  } else handler = (_req, res) => hold(res);
  const server = http.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  process.send!({ port: (server.address() as AddressInfo).port });
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', () => {
    gc?.();
    const memory = process.memoryUsage();
    process.send!({ open, rss: memory.rss, heapUsed: memory.heapUsed });
  });
  process.on('disconnect', () => process.exit(0));
}

void main();
