import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Job, Queue } from 'bullmq';
import { Problem, problems } from '@pos/shared/domain/problem';
import type { Logger } from '@pos/shared/log';
import { isNotApplied, JOB, JobOutcome, JobPayload, JobReply, keyedJobId } from '@pos/shared/queue/jobs';
import { jobSpanFields } from '@pos/shared/queue/telemetry';
import type { TransitionQueues } from '@pos/shared/queue/transition-queue';
import { tracing } from '@pos/shared/telemetry/tracing';
import { withTimeout } from '@pos/shared/util/timeout';
import type { Criticality } from '@pos/shared/openapi/operations';
import type { AdmissionTicket, Admitted, QueueAdmission } from '../overload/queue-admission';
import type { ChannelSubscriber } from '@pos/shared/pubsub/channel-subscriber';

const LOOKUP_TIMEOUT_MS = 1_000;
/** The last look at a job once its request's deadline has come: short, the answer is due. */
const LAST_LOOK_MS = 250;
/** How often a retry looks at the job its first attempt queued; doubling up to the last. */
const FOLLOW_INTERVALS_MS = [50, 100, 200, 400, 800];

/** What the wait needs of the request that asks for a job. */
export interface JobRequest {
  requestId: string;
  /** The request's identity under an Idempotency-Key (see AppState). */
  idempotencyId?: string;
  /** Epoch ms by which the request is answered (see AppState); JOB_TIMEOUT from now when absent. */
  deadline?: number;
  /** Its admission to the queue (overload/admitted.ts): the job is queued on its ticket. */
  admitted?: Admitted;
}

/** What the node's answer to a job's wait is based on, for its admission: `true` when a worker finished the job. */
type Settled = { outcome: JobOutcome; finished: boolean };

interface Pending {
  outcome: Promise<JobOutcome>;
  resolve(outcome: JobOutcome): void;
  timer: NodeJS.Timeout;
  /** The partition's queue it went to, where its record is looked up, and its place in the partition's admission. */
  queue: Queue;
  ticket: AdmissionTicket;
  /** The request's deadline, which the job carries. */
  deadline: number;
  name: string;
  started: bigint;
  /** Under an Idempotency-Key: its 503s say to retry with it. */
  keyed: boolean;
  /**
   * Whether the job may be on the queue, now or later: false until its add is sent (or an
   * earlier attempt's job is found). A command Redis did not confirm may still run when Redis
   * wakes; one never sent cannot.
   */
  mayBeQueued: boolean;
}

/** Where the enqueue-to-outcome time of each job goes (the node's job latency histogram). */
export interface JobTimer {
  observe(labels: { job: string; status: string }, seconds: number): void;
}

/**
 * Puts a job on the transition queue and waits for the worker's outcome on this node's own reply
 * channel, so a node reads only the replies meant for it, however many nodes there are.
 * The wait always ends: by the reply, by a look at the job itself (when a reply may have been
 * lost to a Redis reconnect), or by the request's deadline with a 503.
 *
 * A job is queued where its request was admitted: the client holds the admission from its
 * ticket's acquiry (`admit`, by the route's routing key, overload/admitted.ts) to its release, when
 * the job settles or when no job took it (`release`).
 *
 * Every job carries its request's deadline, and a worker starts none within DEADLINE_MARGIN_MS of
 * it (nor an order write after it). The 503 says what is known (docs/failure-modes.md): "not
 * queued" when no add was sent (Redis was down, or a look-up before it failed or was overtaken by
 * the deadline), "not applied" when a worker refused the job, or when at the deadline the job was
 * still waiting (no worker will start it now), and otherwise "outcome unknown": a job a worker
 * had started, or an add Redis did not confirm (it may run when Redis wakes), may still be applied.
 *
 * A request with an Idempotency-Key queues its job under an id derived from it: a retry (same key,
 * same id) finds the job still queued, running or done, and follows it instead of queuing a
 * second; a job a worker did not apply, or that failed for good, is replaced by the retry's own;
 * if Redis lost it, it is queued again and the worker finds its id among the order's applied jobs.
 */
export class JobClient {
  private readonly pending = new Map<string, Pending>();
  private readonly onMessage = (message: string) => this.onReply(message);
  private readonly onResubscribed = () => void this.recheckAll();

  constructor(
    private readonly queues: Pick<TransitionQueues, 'partitionOfKey' | 'queueOf'>,
    private readonly admission: Pick<QueueAdmission, 'acquire' | 'release' | 'retryAfterSeconds'>,
    private readonly subscriber: ChannelSubscriber,
    private readonly channel: string,
    private readonly timeoutMs: number,
    private readonly log: Logger,
    private readonly timer?: JobTimer,
    /**
     * Whether the queue's connection is up: while it is not, nothing is sent
     * (an add would wait in ioredis' offline queue).
     */
    private readonly connected: () => boolean = () => true,
  ) {}

  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel, this.onMessage);
    this.subscriber.on('resubscribed', this.onResubscribed);
  }

  async stop(): Promise<void> {
    this.subscriber.off('resubscribed', this.onResubscribed);
    await this.subscriber.unsubscribe(this.channel, this.onMessage);
  }

  /**
   * A queued write's admission to the partition of its routing key (routingKey, decided by its
   * route): its ticket, held until its job settles or `release`; or, when the partition refuses,
   * the seconds to tell the caller to wait.
   */
  admit(key: string, criticality: Criticality): Admitted | { refusedForSeconds: number } {
    const partition = this.queues.partitionOfKey(key);
    const ticket = this.admission.acquire(partition, criticality);
    return ticket ? { ticket, taken: false } : { refusedForSeconds: this.admission.retryAfterSeconds(partition) };
  }

  /** Gives back an admission no job took (refused by its checks, replayed, or following an earlier attempt's job). */
  release(admitted: Admitted): void {
    if (!admitted.taken) this.admission.release(admitted.ticket, false);
  }

  /** Resolves with the outcome, or a 503 outcome by the request's deadline, whatever Redis does meanwhile. */
  run(payload: JobPayload, request: JobRequest): Promise<JobOutcome> {
    const { requestId, idempotencyId, admitted } = request;
    if (!admitted) throw new Error(`${payload.name} queued by a route that did not admit it`);
    const deadline = request.deadline ?? Date.now() + this.timeoutMs;
    const jobId = idempotencyId === undefined ? randomUUID() : keyedJobId(idempotencyId);
    // A retry arriving here while this node still waits for the same keyed job shares that wait.
    const waiting = this.pending.get(jobId);
    if (waiting) return waiting.outcome;
    const { ticket } = admitted;
    const queue = this.queues.queueOf(ticket.partition);
    admitted.taken = true;
    let resolve!: (outcome: JobOutcome) => void;
    const outcome = new Promise<JobOutcome>((r) => (resolve = r));
    const traces = tracing();
    if (traces) {
      // the request's span names the order; the wait for the worker's reply is a span of its own
      traces.annotate(jobSpanFields(payload));
      const wait = traces.startSpan('await job outcome', { 'pos.job.name': payload.name });
      void outcome.then((o) => wait.end({ 'pos.outcome.status': o.status }));
    }
    const timer = setTimeout(() => void this.expire(jobId), Math.max(0, deadline - Date.now()));
    const entry: Pending = {
      outcome,
      resolve,
      timer,
      queue,
      ticket,
      deadline,
      name: payload.name,
      started: process.hrtime.bigint(),
      keyed: idempotencyId !== undefined,
      mayBeQueued: false,
    };
    this.pending.set(jobId, entry);
    if (!this.connected()) {
      this.log.warn({ requestId }, 'transition queue connection down; job not queued');
      this.settle(jobId, { outcome: { status: 503, problem: problems.notQueued(entry.keyed) }, finished: false });
      return outcome;
    }
    // Not awaited: the add is bounded by REDIS_COMMAND_TIMEOUT, but the deadline must hold whatever Redis does.
    const queued =
      idempotencyId === undefined
        ? this.add(entry, jobId, payload, requestId)
        : this.queueOrFollow(entry, jobId, payload, requestId);
    queued.catch((err: unknown) => {
      if (!this.pending.has(jobId)) return;
      // An add that was sent and failed (a timeout, a connection lost) may still have reached Redis.
      this.log.error({ err, requestId, mayBeQueued: entry.mayBeQueued }, 'could not enqueue job');
      this.settle(jobId, {
        outcome: { status: 503, problem: entry.mayBeQueued ? this.unknown(entry) : problems.notQueued(entry.keyed) },
        finished: false,
      });
    });
    return outcome;
  }

  /**
   * Sends the job's add, with its request's deadline, unless its request has
   * been answered meanwhile (it would then run unasked).
   */
  private async add(entry: Pending, jobId: string, payload: JobPayload, requestId: string): Promise<void> {
    if (!this.pending.has(jobId)) return;
    entry.mayBeQueued = true;
    await entry.queue.add(
      payload.name,
      { ...payload.data, replyTo: this.channel, requestId, deadline: entry.deadline },
      { jobId },
    );
  }

  /** The 503 of a job that may still run. */
  private unknown(entry: Pending): Problem {
    return problems.outcomeUnknown(entry.keyed, entry.name === JOB.sessionClose ? 'the session' : 'the order');
  }

  /**
   * A keyed job: queued unless an earlier attempt's job is still known to the queue, in which
   * case its outcome is awaited by looking at it (its reply goes to the node that queued it). A
   * job that a worker did not apply, or that failed for good, is replaced by this attempt's: what
   * it wrote, if anything, its id on the order tells.
   */
  private async queueOrFollow(entry: Pending, jobId: string, payload: JobPayload, requestId: string): Promise<void> {
    const { queue } = entry;
    while (this.pending.has(jobId)) {
      const existing = await withTimeout(
        Job.fromId<unknown, JobOutcome>(queue, jobId),
        LOOKUP_TIMEOUT_MS,
        'job look-up',
      );
      if (existing?.finishedOn && existing.returnvalue && !isNotApplied(existing.returnvalue)) {
        this.log.info({ requestId, jobId }, 'retry of a finished request: answering with its outcome');
        this.settle(jobId, { outcome: existing.returnvalue, finished: false });
        return;
      }
      if (existing && !existing.finishedOn) {
        this.log.info({ requestId, jobId }, 'retry of a queued request: following its job');
        entry.mayBeQueued = true;
        const outcome = await this.follow(jobId);
        if (!outcome) return;
        if (!isNotApplied(outcome)) {
          this.settle(jobId, { outcome, finished: true });
          return;
        }
        // The earlier attempt's job came too late for its request and did nothing: this attempt's replaces it.
        continue;
      }
      // Not applied, or failed for good: it does not run again, so removing it queues nothing.
      if (existing) await existing.remove();
      await this.add(entry, jobId, payload, requestId);
      return;
    }
  }

  /** Looks at the job until it has an outcome (returned) or the wait is over (undefined). */
  private async follow(jobId: string): Promise<JobOutcome | undefined> {
    for (let attempt = 0; this.pending.has(jobId); attempt++) {
      await sleep(FOLLOW_INTERVALS_MS[Math.min(attempt, FOLLOW_INTERVALS_MS.length - 1)]!);
      const found = await this.lookUp(jobId).catch(() => undefined);
      if (found?.outcome) return found.outcome;
    }
    return undefined;
  }

  private onReply(message: string): void {
    let reply: JobReply;
    try {
      reply = JSON.parse(message) as JobReply;
    } catch {
      this.log.warn('unreadable job reply');
      return;
    }
    this.settle(reply.jobId, { outcome: reply.outcome, finished: !isNotApplied(reply.outcome) });
  }

  private settle(jobId: string, { outcome, finished }: Settled): void {
    const entry = this.pending.get(jobId);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.pending.delete(jobId);
    this.admission.release(entry.ticket, finished);
    this.timer?.observe(
      { job: entry.name, status: String(outcome.status) },
      Number(process.hrtime.bigint() - entry.started) / 1e9,
    );
    entry.resolve(outcome);
  }

  /**
   * The job's own record: its outcome once finished (its reply may have gone missing), and whether
   * a worker has started it. Bounded, as Redis may be down.
   */
  private async lookUp(
    jobId: string,
    ms = LOOKUP_TIMEOUT_MS,
  ): Promise<{ outcome?: JobOutcome; started: boolean } | undefined> {
    const queue = this.pending.get(jobId)?.queue;
    if (!queue) return undefined;
    const job = await withTimeout(Job.fromId<unknown, JobOutcome>(queue, jobId), ms, 'job look-up');
    if (!job) return undefined;
    return {
      outcome: job.finishedOn && job.returnvalue ? job.returnvalue : undefined,
      started: job.processedOn !== undefined,
    };
  }

  /**
   * The request's deadline: a last look at a job that may be queued, then the 503 that says what is
   * known. A job found waiting, never started, will not be: a worker starts none this close to its deadline.
   */
  private async expire(jobId: string): Promise<void> {
    const entry = this.pending.get(jobId);
    if (!entry) return;
    let found: Awaited<ReturnType<JobClient['lookUp']>>;
    if (entry.mayBeQueued) {
      try {
        found = await this.lookUp(jobId, LAST_LOOK_MS);
      } catch (err) {
        this.log.warn({ err, jobId }, 'could not look up job');
      }
    }
    if (found?.outcome) {
      this.settle(jobId, { outcome: found.outcome, finished: !isNotApplied(found.outcome) });
      return;
    }
    // Settled here, no add is sent after it (see `add`): a job not yet sent is not queued.
    const problem = !entry.mayBeQueued
      ? problems.notQueued(entry.keyed)
      : found && !found.started
        ? problems.notApplied(entry.keyed)
        : this.unknown(entry);
    this.settle(jobId, { outcome: { status: 503, problem }, finished: false });
  }

  private async recheckAll(): Promise<void> {
    for (const jobId of [...this.pending.keys()]) {
      try {
        const outcome = (await this.lookUp(jobId))?.outcome;
        if (outcome) this.settle(jobId, { outcome, finished: !isNotApplied(outcome) });
      } catch (err) {
        this.log.warn({ err, jobId }, 'could not re-check job after reconnect');
      }
    }
  }
}
