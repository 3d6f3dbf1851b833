/**
 * A memory floor for open event streams: a bare server holding each request's event-stream
 * response open (`node`: Node's http alone; `koa`: through Koa), reporting its memory after a GC.
 */
import type http from 'node:http';
import Koa from 'koa';
import { listen } from './listen';

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
  process.send!({ port: (await listen(handler)).port });
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', () => {
    gc?.();
    const memory = process.memoryUsage();
    process.send!({ open, rss: memory.rss, heapUsed: memory.heapUsed });
  });
  process.on('disconnect', () => process.exit(0));
}

void main();
