import { randomUUID } from 'node:crypto';
import { Job, UnrecoverableError, Worker } from 'bullmq';
import type { Config } from '@pos/shared/config';
import { requireUrls, webhookSecretKey } from '@pos/shared/config';
import { problems } from '@pos/shared/domain/problem';
import { EventPublisher } from '@pos/shared/events/location-events';
import type { Logger } from '@pos/shared/log';
import { checkJob } from '@pos/shared/queue/job-schemas';
import { DEADLINE_MARGIN_MS, isNotApplied, isReplyChannel, JobOutcome, JobPayload, JobReply, notAppliedOutcome, WORK_QUEUE } from '@pos/shared/queue/jobs';
import type { Partition } from '@pos/shared/queue/partitions';
import { jobSpanFields, withTelemetry } from '@pos/shared/queue/telemetry';
import { layoutPartitions, queueLayout } from '@pos/shared/queue/work-queue';
import { closeRedis, createRedis, publish, redisTarget } from '@pos/shared/redis';
import { OrderArchiveRepo } from '@pos/shared/store/archive';
import { AuditRepo } from '@pos/shared/store/audit';
import { CommandsRepo } from '@pos/shared/store/commands';
import { LocationsRepo } from '@pos/shared/store/locations';
import { connectMongo, ensureIndexes } from '@pos/shared/store/mongo';
import { OrdersRepo } from '@pos/shared/store/orders';
import { SessionsRepo } from '@pos/shared/store/sessions';
import { createWebhooks } from '@pos/shared/webhooks/wiring';
import { SecretBox } from '@pos/shared/webhooks/secrets';
import { storeProblem } from '@pos/shared/store/store-errors';
import { annotate, traced } from '@pos/shared/telemetry/tracing';
import { settleWithin } from '@pos/shared/util/deadline';
import { AnsweredJobs, standingAnswer } from './jobs/answered-jobs';
import type { JobContext } from './jobs/context';
import { watchDrain } from './drain';
import { faultInjection } from './fault-injection';
import { runJob } from './jobs/handlers';
import { startLifecycle } from './jobs/lifecycle';
import { OrderCache } from './jobs/order-cache';
import { NO_FOLLOW_UPS, type OrderFollowUps } from './jobs/context';
import { startDeadlines } from './jobs/deadlines';
import { orderFollowUps } from './jobs/follow-ups';
import { Outbox } from './jobs/outbox';
import { circuitsOpenGauge, createWorkerMetrics, serveMetrics } from './metrics';
import { startDeliveryWorker, succeeded } from './webhooks/delivery';
import { EndpointGuards } from './webhooks/endpoint-guards';

export interface RunningWorker {
  /** Where its /metrics listens (METRICS_PORT; `0` takes a free port), when it serves them. */
  metricsPort?: number;
  /** Stops taking jobs, lets the active ones finish, then disconnects. */
  close(): Promise<void>;
}

/** A job's data as BullMQ hands it over: what the contract says, until checkJob has checked it. */
type JobData = JobPayload['data'];

/** The log fields of a job; its request id only when it is one (the data may be anything). */
function jobFields(job: Job<JobData>) {
  const requestId = job.data?.requestId;
  return { jobId: job.id, job: job.name, requestId: typeof requestId === 'string' && requestId.length <= 100 ? requestId : undefined };
}

const RUN_RETRY_DELAY_MS = 1_000;
/**
 * How long a job's answer is kept, in lock periods: a job whose worker died is run again once its
 * lock has lapsed and the next stalled-job check (every lock period) has seen it.
 */
const ANSWER_KEPT_LOCK_PERIODS = 10;

export async function startWorker(config: Config, log: Logger): Promise<RunningWorker> {
  const { mongoUrl } = requireUrls(config);
  const target = redisTarget(config.redis);
  const store = await connectMongo(mongoUrl, config.mongo, { boundOperations: false });
  await ensureIndexes(store.db);
  const metrics = createWorkerMetrics(store.commandCount);
  const redis = createRedis(target, { maxRetriesPerRequest: 3 }, log);
  const repos = {
    orders: new OrdersRepo(store.db),
    archive: new OrderArchiveRepo(store.db),
    orderCache: new OrderCache(),
    sessions: new SessionsRepo(store.db),
  };

  // Read for each failure report, not cached: an admin may change it (PATCH /admin/v1/locations/{id}).
  const locations = new LocationsRepo(store.db);
  const failureThreshold = async (locationId: string): Promise<number> =>
    (await locations.failureThreshold(locationId)) ?? config.orders.failureThreshold;

  const webhooks = createWebhooks({ db: store.db, redis, redisConfig: config.redis, webhooks: config.webhooks, registry: metrics.registry, log });
  const webhookEmitter = webhooks.emitter;

  const answers = new AnsweredJobs(config.redis.prefix, ANSWER_KEPT_LOCK_PERIODS * config.worker.jobLockDurationMs);
  const checkpoint = faultInjection(config.worker.faultInject, log);

  /** The reply message to the waiting API node, when a node of this deployment waits. */
  const replyOf = (job: Job<JobData>, outcome: JobOutcome): [string, string] | undefined => {
    const replyTo = job.data?.replyTo;
    if (!isReplyChannel(config.redis.prefix, replyTo)) return undefined;
    const message: JobReply = { jobId: job.id!, outcome };
    return [replyTo, JSON.stringify(message)];
  };
  const reply = async (job: Job<JobData>, outcome: JobOutcome) => {
    const message = replyOf(job, outcome);
    if (message) await publish(redis, ...message);
  };

  const process_ = async (job: Job<JobData>): Promise<JobOutcome> => {
    // Nothing acts on data that breaks the queue contract; no retry would mend it.
    const checked = checkJob(job.name, job.data);
    if (typeof checked === 'string') throw new UnrecoverableError(`malformed job data: ${checked}`);
    annotate(jobSpanFields(checked));
    const jobLog = log.child(jobFields(job));
    // A first run taken too late for its request (a backlog, an outage): not applied, and not worth
    // a read. A run again (after a crash or a failed attempt) goes on whatever the time: the first
    // may have written, and then its announcement is owed (order-action.ts).
    const { deadline } = checked.data;
    if (job.attemptsStarted <= 1 && deadline !== undefined && Date.now() > deadline - DEADLINE_MARGIN_MS) {
      jobLog.info({ lateMs: Date.now() - deadline }, 'job taken too late for its request; not applied');
      const outcome = notAppliedOutcome(job.id!);
      await reply(job, outcome);
      return outcome;
    }
    // Run before: if that run answered, its answer stands (see AnsweredJobs); a 200's order is read again.
    const answered = job.attemptsStarted > 1 ? await answers.recall(redis, job.id!) : undefined;
    if (answered) jobLog.info({ status: answered.status }, 'job run again after it had answered; nothing is changed');
    const standing = answered && standingAnswer(answered);
    if (standing) return standing;
    // The job's events go out with its reply, after it (one round trip; see Outbox).
    const outbox = new Outbox(webhookEmitter);
    const ctx: JobContext = {
      ...repos,
      events: new EventPublisher(outbox, config.redis.prefix, outbox),
      followUps,
      failureThreshold,
      jobId: job.id!,
      answered: answered !== undefined,
      log: jobLog,
      checkpoint,
    };
    const outcome = await runJob(ctx, checked);
    annotate({ 'pos.outcome.status': outcome.status });
    // An answer that applied nothing is not kept: a re-run does the work afresh.
    const record = isNotApplied(outcome) ? undefined : answers.record(job.id!, outcome);
    await traced('publish events and reply', { 'pos.events': outbox.size }, () => outbox.send(redis, record, replyOf(job, outcome)));
    checkpoint('after-answer');
    return outcome;
  };

  // BullMQ leaves a connection it was given open on close; we close it ourselves.
  const workerConnection = createRedis(target, { maxRetriesPerRequest: null }, log);
  const consume = (partition: Partition): Worker<JobData, JobOutcome> => {
    const worker = new Worker<JobData, JobOutcome>(WORK_QUEUE, process_, withTelemetry({
      connection: workerConnection,
      prefix: partition.prefix,
      concurrency: config.worker.concurrency,
      lockDuration: config.worker.jobLockDurationMs,
      stalledInterval: config.worker.jobLockDurationMs,
      maxStalledCount: 3,
      // After a lost connection (a failed-over master) fetch again soon: BullMQ's 15 s default
      // would leave the partition idle well past JOB_TIMEOUT once Redis is back.
      runRetryDelay: RUN_RETRY_DELAY_MS,
    }));
    const partitionLog = partition.label ? log.child({ partition: partition.label }) : log;
    worker.on('failed', (job, err) => {
      if (!job) return;
      const jobLog = partitionLog.child(jobFields(job));
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
    worker.on('error', (err) => partitionLog.error({ err }, 'worker error'));
    // A job taken too late is `expired`: it is not work done.
    worker.on('completed', (job, outcome) => metrics.jobsProcessed.inc({ job: job.name, status: isNotApplied(outcome) ? 'expired' : String(outcome?.status) }));
    return worker;
  };

  // Deadlines and presence (docs/presence-and-deadlines.md): their workers, and the follow-ups
  // of order transitions that add deadline jobs and count failed orders.
  let followUps: OrderFollowUps = NO_FOLLOW_UPS;
  const deadlines = await startDeadlines({
    config,
    log,
    redis,
    workerConnection,
    orders: repos.orders,
    locations,
    webhooks: webhookEmitter,
    contextFor: (jobId, jobLog, events) => ({ ...repos, events, followUps, failureThreshold, jobId, answered: false, log: jobLog, checkpoint }),
    checkpoint,
  });
  followUps = orderFollowUps({ deadlines: deadlines.queue, locations, presence: config.presence, log });

  // Draining partitions are consumed too, and watched until empty (see watchDrain).
  const { current, draining } = layoutPartitions(queueLayout(config));
  const workers = [...current, ...draining].map(consume);
  const drain = draining.length > 0 ? await watchDrain(draining, redis, log) : undefined;
  const secretKey = webhookSecretKey(config);
  const guards = new EndpointGuards(config.webhooks, succeeded);
  circuitsOpenGauge(metrics.registry, () => guards.openCircuits);
  const deliveryWorker = secretKey
    ? startDeliveryWorker(workerConnection, config.redis, config.webhooks, config.worker.jobLockDurationMs, {
        webhooks: webhooks.subscriptions,
        deliveries: webhooks.log,
        pending: webhooks.deliveries,
        guards,
        secrets: new SecretBox(secretKey),
        metrics: metrics.webhooks,
        log: log.child({ queue: 'webhook-delivery' }),
      })
    : undefined;
  if (!deliveryWorker) log.warn('neither WEBHOOK_SECRET_KEY nor API_KEY_SECRET is set: this worker delivers no webhooks');
  await Promise.all([...workers, ...(deliveryWorker ? [deliveryWorker] : [])].map((worker) => worker.waitUntilReady()));
  const listener = config.worker.metricsPort === undefined ? undefined : await serveMetrics(metrics.registry, config.worker.metricsPort, config.http.host);
  const lifecycle = await startLifecycle({
    config,
    log,
    redis,
    workerConnection,
    deps: {
      orders: repos.orders,
      archive: repos.archive,
      commands: new CommandsRepo(store.db),
      webhookDeliveries: webhooks.log,
      audit: new AuditRepo(store.db),
      checkpoint,
    },
  });
  log.info(
    {
      queue: WORK_QUEUE,
      partitions: current.length,
      ...(draining.length > 0 ? { draining: draining.map((partition) => partition.label) } : {}),
      concurrency: config.worker.concurrency,
      metricsPort: listener?.port,
    },
    'worker ready',
  );

  return {
    metricsPort: listener?.port,
    async close() {
      listener?.server.close();
      await Promise.all([
        settleWithin(
          Promise.all([...workers, ...(deliveryWorker ? [deliveryWorker] : [])].map((worker) => worker.close())),
          config.process.shutdownGraceMs,
          log,
          'finishing the active jobs',
        ),
        lifecycle.close(),
        deadlines.close(),
      ]);
      if (drain) await settleWithin(drain.stop(), 2_000, log, 'closing the drained queues');
      await settleWithin(webhooks.queue.close(), 2_000, log, 'closing the webhook queue');
      await Promise.all([closeRedis(redis), closeRedis(workerConnection)]);
      await store.close();
      log.info('worker stopped');
    },
  };
}
