/**
 * JobClient, the API's wait for a worker, on a real Redis and a real BullMQ queue, with the test
 * as the worker: the reply that ends the wait, a reply lost (the job's record tells), what the 503
 * says it knows, a keyed retry that follows or reuses its first attempt's job, and a job
 * queued only on its request's admission.
 */
import { Job, Worker } from 'bullmq';
import Redis from 'ioredis';
import { JobClient, type JobRequest } from '@pos/api/jobs/job-client';
import { type Admitted, QueueAdmission } from '@pos/api/overload/queue-admission';
import { ChannelSubscriber } from '@pos/shared/pubsub/channel-subscriber';
import { singleRedisNodes } from '@pos/shared/pubsub/subscriber-nodes';
import { createLogger } from '@pos/shared/log';
import { type JobOutcome, type JobReply, orderActionJob, replyChannel, TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import { TransitionQueues } from '@pos/shared/queue/transition-queue';

type Behaviour = 'reply' | 'no-reply' | 'hang';

describe('JobClient', () => {
  const log = createLogger('silent', 'test');
  let prefix: string;
  let redis: Redis;
  let workerConnection: Redis;
  let queues: TransitionQueues;
  let subscriber: ChannelSubscriber;
  let admission: QueueAdmission;
  let client: JobClient;
  let worker: Worker;
  let behaviour: Behaviour;
  let runs: Job[];
  let suite = 0;

  /** A request admitted to the partition of `loc-1` (what the route's admitQueued gives it). */
  const admit = (request: JobRequest): JobRequest => ({
    ...request,
    admitted: client.admit('loc-1', 'critical') as Admitted,
  });
  const payload = (number = 1) =>
    orderActionJob({ locationId: 'loc-1' }, number, { kind: 'status', newState: 'COMPLETED' });
  const OK: JobOutcome = {
    status: 200,
    order: { number: 1, state: 'COMPLETED', rows: [], guestCount: 1 },
  } as unknown as JobOutcome;

  beforeEach(async () => {
    prefix = `job-client-${process.pid}-${(suite += 1)}`;
    redis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: 3 });
    workerConnection = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: null });
    queues = new TransitionQueues(redis, { redisPrefix: prefix, cluster: false, partitions: 1 }, log, 100);
    subscriber = new ChannelSubscriber(singleRedisNodes({ url: process.env.TEST_REDIS_URL!, cluster: false }), log);
    admission = new QueueAdmission(1, { targetWaitMs: 500, floor: 2 });
    client = new JobClient(queues, admission, subscriber, replyChannel(prefix, 'node-1'), 1_500, log);
    await client.start();
    behaviour = 'reply';
    runs = [];
    worker = new Worker(
      TRANSITION_QUEUE,
      async (job: Job) => {
        runs.push(job);
        if (behaviour === 'hang') await new Promise((resolve) => setTimeout(resolve, 2_000).unref());
        if (behaviour === 'reply') {
          const reply: JobReply = { jobId: job.id!, outcome: OK };
          await redis.publish(job.data.replyTo, JSON.stringify(reply));
        }
        return OK;
      },
      { connection: workerConnection, prefix: queues.current[0]!.partition.prefix, concurrency: 4 },
    );
  });
  afterEach(async () => {
    await worker.close(true);
    await client.stop();
    await subscriber.quit();
    await queues.close();
    redis.disconnect();
    workerConnection.disconnect();
  });

  it("resolves with the worker's reply; the job carries its reply channel, request id and deadline", async () => {
    const deadline = Date.now() + 1_000;
    await expect(client.run(payload(), admit({ requestId: 'r1', deadline }))).resolves.toEqual(OK);
    expect(runs[0]!.data).toMatchObject({ replyTo: replyChannel(prefix, 'node-1'), requestId: 'r1', deadline });
  });

  it("a reply lost: the job's own record gives the outcome at the deadline", async () => {
    behaviour = 'no-reply';
    const started = Date.now();
    await expect(client.run(payload(), admit({ requestId: 'r2', deadline: Date.now() + 800 }))).resolves.toEqual(OK);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
  });

  it('at the deadline, a job a worker started and did not finish is "outcome unknown"', async () => {
    behaviour = 'hang';
    const unknown = await client.run(payload(), admit({ requestId: 'r3', deadline: Date.now() + 500 }));
    expect(unknown).toMatchObject({ status: 503, problem: { detail: expect.stringContaining('outcome is unknown') } });
  });

  it('with the queue\'s connection down, nothing is sent: "not queued", at once', async () => {
    const offline = new JobClient(
      queues,
      admission,
      subscriber,
      replyChannel(prefix, 'node-2'),
      1_500,
      log,
      undefined,
      () => false,
    );
    const started = Date.now();
    const outcome = await offline.run(payload(), admit({ requestId: 'r4', deadline: Date.now() + 1_000 }));
    expect(outcome).toMatchObject({ status: 503, problem: { detail: expect.stringContaining('was not queued') } });
    expect(Date.now() - started).toBeLessThan(500);
    expect(await queues.jobCounts('waiting', 'active', 'completed')).toEqual({ waiting: 0, active: 0, completed: 0 });
  });

  it('a keyed retry while its first attempt waits shares that wait; one after it finished gets its outcome, with no second job', async () => {
    behaviour = 'hang';
    const request = { requestId: 'r5', idempotencyId: 'key-1', deadline: Date.now() + 5_000 };
    const first = client.run(payload(), admit(request));
    const again = client.run(payload(), admit({ ...request, requestId: 'r6' }));
    behaviour = 'reply';
    await expect(first).resolves.toEqual(OK);
    await expect(again).resolves.toEqual(OK);
    await expect(
      client.run(payload(), admit({ ...request, requestId: 'r7', deadline: Date.now() + 1_000 })),
    ).resolves.toEqual(OK);
    expect(runs).toHaveLength(1);
  });

  it('queues a job where its request was admitted, releasing the ticket when it settles; a job without an admission is a bug', async () => {
    const request = admit({ requestId: 'r8', deadline: Date.now() + 1_000 });
    await expect(client.run(payload(), request)).resolves.toEqual(OK);
    expect(request.admitted!.taken).toBe(true);
    expect(() => client.run(payload(), { requestId: 'r9' })).toThrow(
      'order-action queued by a route that did not admit it',
    );
    expect(runs).toHaveLength(1);
    expect(admission.signals()[0]!.inFlight).toBe(0);
    // an admission no job took is given back
    const unused = client.admit('loc-1', 'critical') as Admitted;
    expect(admission.signals()[0]!.inFlight).toBe(1);
    client.release(unused);
    expect(admission.signals()[0]!.inFlight).toBe(0);
  });
});
