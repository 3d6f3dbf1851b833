/**
 * The status update's floor, API side: Koa, the JSON body, `Queue.add` with the service's job
 * options, and a wait for the worker's reply on Redis pub/sub (one subscription, matched by job id).
 */
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { TRANSITION_QUEUE, transitionJobOptions } from '@pos/shared/queue/jobs';
import { listen } from './listen';

/** A reply that never comes ends the wait as the service's JOB_TIMEOUT would. */
const TIMEOUT_MS = 10_000;

async function main(): Promise<void> {
  const url = process.env.REDIS_URL!;
  const prefix = process.env.REDIS_PREFIX!;
  const channel = `${prefix}:reply:floor`;
  const queue = new Queue(TRANSITION_QUEUE, {
    connection: new Redis(url, { maxRetriesPerRequest: 3 }),
    prefix,
    defaultJobOptions: transitionJobOptions(1000),
  });
  const subscriber = new Redis(url);
  const waiting = new Map<string, (reply: { status: number; body: unknown }) => void>();
  subscriber.on('message', (_channel: string, message: string) => {
    const { jobId, outcome } = JSON.parse(message) as { jobId: string; outcome: { status: number; body: unknown } };
    waiting.get(jobId)?.(outcome);
  });
  await subscriber.subscribe(channel);

  const app = new Koa();
  const router = new Router();
  router.put('/orders/:number/statusupdate', bodyParser({ enableTypes: ['json'] }), async (ctx) => {
    const { newState } = ctx.request.body as { newState?: unknown };
    const orderNumber = Number(ctx.params.number);
    if (typeof newState !== 'string' || !Number.isInteger(orderNumber)) ctx.throw(400);
    const jobId = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const reply = new Promise<{ status: number; body: unknown }>((resolve) => {
      waiting.set(jobId, resolve);
      timer = setTimeout(() => resolve({ status: 503, body: { title: 'Service Unavailable' } }), TIMEOUT_MS);
    });
    try {
      await queue.add(
        'order-action',
        { locationId: String(ctx.get('x-location')), orderNumber, newState, replyTo: channel },
        { jobId },
      );
      const outcome = await reply;
      ctx.status = outcome.status;
      ctx.body = outcome.body;
    } finally {
      clearTimeout(timer);
      waiting.delete(jobId);
    }
  });
  app.use(router.routes());
  const { server, port } = await listen(app.callback());
  process.stdout.write(`${JSON.stringify({ msg: 'status floor listening', port })}\n`);
  process.on('SIGTERM', () =>
    server.close(() => void Promise.all([queue.close(), subscriber.quit()]).then(() => process.exit(0))),
  );
}

void main();
