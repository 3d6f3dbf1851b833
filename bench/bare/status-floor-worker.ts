/**
 * The status update's floor, worker side: a BullMQ worker with the service's concurrency and
 * lock; its job reads the order, writes it guarded by the version read (again when a write came
 * between) and publishes the record on the reply channel. With FLOOR_WEBHOOK_URL, it then POSTs
 * the update's two events, each signed with `standardwebhooks`, on a connection of its own.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Job, Worker } from 'bullmq';
import Redis from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { toOrderRecord } from '@pos/shared/domain/records';
import { TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import type { OrderDoc } from '@pos/shared/store/documents';
import { floorMongo, serveCommandCount } from './floor-mongo';

interface FloorJob {
  locationId: string;
  orderNumber: number;
  newState: string;
  replyTo: string;
}

function post(url: URL, signer: Webhook, body: string): Promise<number> {
  const id = `msg_${randomUUID()}`;
  const at = new Date();
  const headers = {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signer.sign(id, at, body),
  };
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers, agent: false }, (response) => {
      response.resume().on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject).end(body);
  });
}

/** The events a job's update implies, each POSTed: none without FLOOR_WEBHOOK_URL. */
function webhookPosts(): (record: unknown) => Promise<unknown> {
  const url = process.env.FLOOR_WEBHOOK_URL;
  if (!url) return async () => undefined;
  const target = new URL(url);
  const signer = new Webhook(process.env.FLOOR_WEBHOOK_SECRET!);
  const body = (type: string, record: unknown) =>
    JSON.stringify({ id: `evt_${randomUUID()}`, type, timestamp: new Date().toISOString(), data: { order: record } });
  return (record) =>
    Promise.all(['order.failed', 'order.placed'].map((type) => post(target, signer, body(type, record))));
}

async function main(): Promise<void> {
  const url = process.env.REDIS_URL!;
  const mongo = await floorMongo();
  const orders = mongo.db.collection<OrderDoc>('orders');
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  const reply = (job: Job<FloorJob>, status: number, body: unknown) =>
    redis.publish(job.data.replyTo, JSON.stringify({ jobId: job.id, outcome: { status, body } }));
  const deliver = webhookPosts();

  const worker = new Worker<FloorJob>(
    TRANSITION_QUEUE,
    async (job) => {
      const { locationId, orderNumber } = job.data;
      for (;;) {
        const order = await orders.findOne({ locationId, number: orderNumber });
        if (!order) return void (await reply(job, 400, { title: 'Order not found' }));
        const updated = await orders.findOneAndUpdate(
          { _id: order._id, version: order.version },
          { $inc: { failureCount: 1, version: 1 }, $set: { updatedAt: new Date() } },
          { returnDocument: 'after' },
        );
        if (!updated) continue;
        const record = toOrderRecord(updated);
        await reply(job, 200, record);
        return void (await deliver(record));
      }
    },
    {
      connection: new Redis(url, { maxRetriesPerRequest: null }),
      prefix: process.env.REDIS_PREFIX!,
      concurrency: 16,
      lockDuration: 30_000,
      stalledInterval: 30_000,
    },
  );
  await worker.waitUntilReady();
  const metricsPort = await serveCommandCount(mongo.commands);
  process.stdout.write(`${JSON.stringify({ msg: 'status floor worker ready', metricsPort })}\n`);
  process.on(
    'SIGTERM',
    () => void worker.close().then(() => Promise.all([redis.quit(), mongo.client.close()]).then(() => process.exit(0))),
  );
}

void main();
