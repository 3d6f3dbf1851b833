/**
 * The BullMQ ceiling's worker: the service's queue, options and reply channel, but a processor
 * that only answers (no MongoDB), so add-and-wait costs what the queue itself costs.
 */
import { Job, Worker } from 'bullmq';
import type { JobOutcome, JobReply } from '@pos/shared/queue/jobs';
import { TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import { createRedis, publish, RedisTarget } from '@pos/shared/redis';

async function main(): Promise<void> {
  const target: RedisTarget = { url: process.env.REDIS_URL!, cluster: process.env.REDIS_CLUSTER === '1' };
  const prefix = process.env.REDIS_PREFIX!;
  const redis = createRedis(target, { maxRetriesPerRequest: 3 });
  const connection = createRedis(target, { maxRetriesPerRequest: null });
  const worker = new Worker<{ replyTo?: string }, JobOutcome>(
    TRANSITION_QUEUE,
    async (job: Job<{ replyTo?: string }>) => {
      const outcome: JobOutcome = { status: 200, body: {} };
      const reply: JobReply = { jobId: job.id!, outcome };
      if (job.data.replyTo) await publish(redis, job.data.replyTo, JSON.stringify(reply));
      return outcome;
    },
    { connection, prefix, concurrency: Number(process.env.WORKER_CONCURRENCY ?? 16), lockDuration: 30_000, stalledInterval: 30_000 },
  );
  await worker.waitUntilReady();
  process.stdout.write(`${JSON.stringify({ msg: 'echo worker ready' })}\n`);
  process.on('SIGTERM', () => {
    void worker.close().then(async () => {
      await Promise.all([redis.quit(), connection.quit()]);
      process.exit(0);
    });
  });
}

void main();
