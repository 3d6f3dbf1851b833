/**
 * The pipeline of one transition job, in order: check its data against the queue contract,
 * refuse a first run taken past its request's deadline, recall the answer of an earlier run,
 * run its handler, then send its messages, the record of its answer and its reply together.
 */
import { Job, UnrecoverableError } from 'bullmq';
import { Announcer, redisPublisher } from '@pos/shared/events/announcements';
import type { Logger } from '@pos/shared/log';
import { checkJob } from '@pos/shared/queue/job-schemas';
import {
  DEADLINE_MARGIN_MS,
  isNotApplied,
  isReplyChannel,
  JobOutcome,
  JobPayload,
  JobReply,
  notAppliedOutcome,
} from '@pos/shared/queue/jobs';
import { jobSpanFields } from '@pos/shared/queue/telemetry';
import { publish, type RedisClient } from '@pos/shared/redis';
import type { Repos } from '@pos/shared/store/repos';
import { annotate, traced } from '@pos/shared/telemetry/tracing';
import type { Checkpoint } from '../fault-injection';
import { AnsweredJobs, standingAnswer } from './answered-jobs';
import type { JobContext, OrderFollowUps } from './context';
import { runJob } from './handlers';
import { JobMessages, type MessageSender } from './job-messages';
import type { OrderCache } from './order-cache';
import { OrderWriter } from '../outbox/order-writer';

/** A job's data as BullMQ hands it over: what the contract says, until checkJob has checked it. */
export type JobData = JobPayload['data'];

/** The log fields of a job; its request id only when it is one (the data may be anything). */
export function jobFields(job: Job<JobData>) {
  const requestId = job.data?.requestId;
  return {
    jobId: job.id,
    job: job.name,
    requestId: typeof requestId === 'string' && requestId.length <= 100 ? requestId : undefined,
  };
}

export interface JobProcessorDeps {
  redis: RedisClient;
  /** Sends each job's messages and reply (those of jobs finishing together in one pipeline). */
  messages: MessageSender;
  /** The deployment's Redis key prefix: reply channels and kept answers live under it. */
  prefix: string;
  repos: Pick<Repos, 'orders' | 'archive' | 'sessions'>;
  orderCache: OrderCache;
  answers: AnsweredJobs;
  followUps: OrderFollowUps;
  failureThreshold(locationId: string): Promise<number>;
  checkpoint: Checkpoint;
  log: Logger;
}

export class JobProcessor {
  private readonly writer: OrderWriter;

  private readonly nodes: Announcer;

  constructor(private readonly deps: JobProcessorDeps) {
    this.writer = new OrderWriter(deps.repos.orders);
    this.nodes = new Announcer(redisPublisher(deps.redis), deps.prefix);
  }

  /** What a transition may touch, for a job of the queue or an order deadline job's auto-abort. */
  context(jobId: string, log: Logger, announcer: Announcer, { runBefore = false, answered = false } = {}): JobContext {
    const { repos, orderCache, followUps, failureThreshold, checkpoint } = this.deps;
    // (named, not spread from `repos`, which holds every repository: one shape for every job's context)
    const { orders, archive, sessions } = repos;
    return {
      orders,
      archive,
      sessions,
      orderCache,
      writer: this.writer,
      announcer,
      nodes: this.nodes,
      followUps,
      failureThreshold,
      jobId,
      answered,
      runBefore,
      log,
      checkpoint,
    };
  }

  async process(job: Job<JobData>): Promise<JobOutcome> {
    const { redis, answers, checkpoint } = this.deps;
    // Nothing acts on data that breaks the queue contract; no retry would mend it.
    const checked = checkJob(job.name, job.data);
    if (typeof checked === 'string') throw new UnrecoverableError(`malformed job data: ${checked}`);
    annotate(jobSpanFields(checked));
    const log = this.deps.log.child(jobFields(job));
    // A first run taken too late for its request (a backlog, an outage): not applied, and not worth
    // a read. A run again (after a crash or a failed attempt) goes on whatever the time: the first
    // may have written, and then its announcement is owed (order-action.ts).
    const { deadline } = checked.data;
    if (job.attemptsStarted <= 1 && deadline !== undefined && Date.now() > deadline - DEADLINE_MARGIN_MS) {
      log.info({ lateMs: Date.now() - deadline }, 'job taken too late for its request; not applied');
      const outcome = notAppliedOutcome(job.id!);
      await this.reply(job, outcome);
      return outcome;
    }
    // Run before: if that run answered, its answer stands (see AnsweredJobs); a 200's order is read again.
    const answered = job.attemptsStarted > 1 ? await answers.recall(redis, job.id!) : undefined;
    if (answered) log.info({ status: answered.status }, 'job run again after it had answered; nothing is changed');
    const standing = answered && standingAnswer(answered);
    if (standing) return standing;
    // The job's messages go out with its reply, after it (one round trip; see JobMessages).
    const messages = new JobMessages();
    const announcer = new Announcer(messages, this.deps.prefix);
    const outcome = await runJob(
      this.context(job.id!, log, announcer, { runBefore: job.attemptsStarted > 1, answered: answered !== undefined }),
      checked,
    );
    annotate({ 'pos.outcome.status': outcome.status });
    // An answer that applied nothing is not kept: a re-run does the work afresh.
    const record = isNotApplied(outcome) ? undefined : answers.record(job.id!, outcome);
    await traced('publish events and reply', { 'pos.events': messages.size }, () =>
      messages.send(this.deps.messages, record, this.replyOf(job, outcome)),
    );
    checkpoint('after-answer');
    return outcome;
  }

  /** Tells the waiting API node, when a node of this deployment waits. */
  async reply(job: Job<JobData>, outcome: JobOutcome): Promise<void> {
    const message = this.replyOf(job, outcome);
    if (message) await publish(this.deps.redis, ...message);
  }

  private replyOf(job: Job<JobData>, outcome: JobOutcome): [string, string] | undefined {
    const replyTo = job.data?.replyTo;
    if (!isReplyChannel(this.deps.prefix, replyTo)) return undefined;
    const message: JobReply = { jobId: job.id!, outcome };
    return [replyTo, JSON.stringify(message)];
  }
}
