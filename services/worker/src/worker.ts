import { randomUUID } from 'node:crypto';
import { Job, UnrecoverableError, Worker } from 'bullmq';
import type { Config } from '@pos/shared/config';
import { requireUrls } from '@pos/shared/config';
import { problems } from '@pos/shared/domain/problem';
import { EventPublisher } from '@pos/shared/events/location-events';
import type { Logger } from '@pos/shared/log';
import { jobDataFault } from '@pos/shared/queue/job-schemas';
import { isReplyChannel, JOB, JobOutcome, JobReply, OrderActionJob, SessionCloseJob, WORK_QUEUE } from '@pos/shared/queue/jobs';
import { closeRedis, createRedis } from '@pos/shared/redis';
import { LocationsRepo } from '@pos/shared/store/locations';
import { connectMongo, ensureIndexes } from '@pos/shared/store/mongo';
import { OrdersRepo } from '@pos/shared/store/orders';
import { SessionsRepo } from '@pos/shared/store/sessions';
import { storeProblem } from '@pos/shared/store/store-errors';
import { settleWithin } from '@pos/shared/util/deadline';
import type { JobContext } from './jobs/context';
import { applyOrderAction } from './jobs/order-action';
import { OrderCache } from './jobs/order-cache';
import { Outbox } from './jobs/outbox';
import { closeSession } from './jobs/session-close';
import { createWorkerMetrics, serveMetrics } from './metrics';

export interface RunningWorker {
  /** Stops taking jobs, lets the active ones finish, then disconnects. */
  close(): Promise<void>;
}

type JobData = (OrderActionJob | SessionCloseJob) & { replyTo?: string; requestId?: string };

/** The log fields of a job; its request id only when it is one (the data may be anything). */
function jobFields(job: Job<JobData>) {
  const requestId = job.data?.requestId;
  return { jobId: job.id, job: job.name, requestId: typeof requestId === 'string' && requestId.length <= 100 ? requestId : undefined };
}

export async function startWorker(config: Config, log: Logger): Promise<RunningWorker> {
  const { mongoUrl, redisUrl } = requireUrls(config);
  const store = await connectMongo(mongoUrl, config.mongoDb);
  await ensureIndexes(store.db);
  const metrics = createWorkerMetrics(store.commandCount);
  const redis = createRedis(redisUrl, { maxRetriesPerRequest: 3 }, log);
  const repos = {
    orders: new OrdersRepo(store.db),
    orderCache: new OrderCache(),
    sessions: new SessionsRepo(store.db),
  };

  // Nothing changes a location's threshold after its creation, so one read per location will do.
  const locations = new LocationsRepo(store.db);
  const thresholds = new Map<string, number>();
  const failureThreshold = async (locationId: string): Promise<number> => {
    let threshold = thresholds.get(locationId);
    if (threshold === undefined) {
      threshold = (await locations.find(locationId))?.failureThreshold ?? config.failureThreshold;
      thresholds.set(locationId, threshold);
    }
    return threshold;
  };

  const checkpoint = (point: 'before-apply' | 'after-apply') => {
    if (config.faultInject !== `crash-${point}`) return;
    // Best effort: pino writes asynchronously, and SIGKILL may beat this line to the pipe.
    log.warn({ point }, 'FAULT_INJECT: killing this worker');
    process.kill(process.pid, 'SIGKILL');
  };

  /** The reply message to the waiting API node, when a node of this deployment waits. */
  const replyOf = (job: Job<JobData>, outcome: JobOutcome): [string, string] | undefined => {
    const replyTo = job.data?.replyTo;
    if (!isReplyChannel(config.redisPrefix, replyTo)) return undefined;
    const message: JobReply = { jobId: job.id!, outcome };
    return [replyTo, JSON.stringify(message)];
  };
  const reply = async (job: Job<JobData>, outcome: JobOutcome) => {
    const message = replyOf(job, outcome);
    if (message) await redis.publish(...message);
  };

  const process_ = async (job: Job<JobData>): Promise<JobOutcome> => {
    // Nothing acts on data that breaks the queue contract; no retry would mend it.
    const fault = jobDataFault(job.name, job.data);
    if (fault) throw new UnrecoverableError(`malformed job data: ${fault}`);
    // The job's events go out with its reply, after it (one round trip; see Outbox).
    const outbox = new Outbox();
    const ctx: JobContext = {
      ...repos,
      events: new EventPublisher(outbox, config.redisPrefix),
      failureThreshold,
      jobId: job.id!,
      log: log.child(jobFields(job)),
      checkpoint,
    };
    let outcome: JobOutcome;
    switch (job.name) {
      case JOB.orderAction:
        outcome = await applyOrderAction(ctx, job.data as OrderActionJob);
        break;
      case JOB.sessionClose:
        outcome = await closeSession(ctx, job.data as SessionCloseJob);
        break;
      default:
        throw new Error(`unknown job ${job.name}`);
    }
    await outbox.send(redis, replyOf(job, outcome));
    return outcome;
  };

  // BullMQ leaves a connection it was given open on close; we close it ourselves.
  const workerConnection = createRedis(redisUrl, { maxRetriesPerRequest: null }, log);
  const worker = new Worker<JobData, JobOutcome>(WORK_QUEUE, process_, {
    connection: workerConnection,
    prefix: config.redisPrefix,
    concurrency: config.workerConcurrency,
    lockDuration: config.jobLockDurationMs,
    stalledInterval: config.jobLockDurationMs,
    maxStalledCount: 3,
  });

  worker.on('failed', (job, err) => {
    if (!job) return;
    const jobLog = log.child(jobFields(job));
    const final = err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
    if (!final) {
      jobLog.warn({ err, attempt: job.attemptsMade }, 'job attempt failed; it will be retried');
      return;
    }
    const errorId = randomUUID();
    jobLog.error({ err, errorId }, 'job failed for good');
    metrics.jobsProcessed.inc({ job: job.name, status: 'failed' });
    const problem = storeProblem(err, errorId) ?? problems.internal(errorId);
    reply(job, { status: problem.status, problem }).catch((e) => jobLog.error({ err: e }, 'reply failed'));
  });
  worker.on('error', (err) => log.error({ err }, 'worker error'));
  worker.on('completed', (job, outcome) => metrics.jobsProcessed.inc({ job: job.name, status: String(outcome?.status) }));
  await worker.waitUntilReady();
  const listener = config.metricsPort === undefined ? undefined : await serveMetrics(metrics.registry, config.metricsPort, config.host);
  log.info({ queue: WORK_QUEUE, concurrency: config.workerConcurrency, metricsPort: listener?.port }, 'worker ready');

  return {
    async close() {
      listener?.server.close();
      await settleWithin(worker.close(), config.shutdownGraceMs, log, 'finishing the active jobs');
      await Promise.all([closeRedis(redis), closeRedis(workerConnection)]);
      await store.close();
      log.info('worker stopped');
    },
  };
}
