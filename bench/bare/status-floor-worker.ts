/**
 * The status update's floor, worker side: a BullMQ worker with the service's concurrency and
 * lock, whose job reads the order (`findOne`), writes it guarded by the version read
 * (`findOneAndUpdate`, read again when another write came between) and publishes the outcome,
 * the order's record, on the reply channel. No outbox, answer record or applied job ids: what a
 * version-guarded update cannot do without.
 */
import { Job, Worker } from 'bullmq';
import Redis from 'ioredis';
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

async function main(): Promise<void> {
  const url = process.env.REDIS_URL!;
  const mongo = await floorMongo();
  const orders = mongo.db.collection<OrderDoc>('orders');
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  const reply = (job: Job<FloorJob>, status: number, body: unknown) => redis.publish(job.data.replyTo, JSON.stringify({ jobId: job.id, outcome: { status, body } }));

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
        if (updated) return void (await reply(job, 200, toOrderRecord(updated)));
      }
    },
    { connection: new Redis(url, { maxRetriesPerRequest: null }), prefix: process.env.REDIS_PREFIX!, concurrency: 16, lockDuration: 30_000, stalledInterval: 30_000 },
  );
  await worker.waitUntilReady();
  const metricsPort = await serveCommandCount(mongo.commands);
  process.stdout.write(`${JSON.stringify({ msg: 'status floor worker ready', metricsPort })}\n`);
  process.on('SIGTERM', () => void worker.close().then(() => Promise.all([redis.quit(), mongo.client.close()]).then(() => process.exit(0))));
}

void main();
