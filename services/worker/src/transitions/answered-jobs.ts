import type { JobOutcome } from '@pos/shared/queue/jobs';
import type { RedisClient } from '@pos/shared/redis';

/** A job's answer as kept: whole, except a 200's body (the order, which a re-run reads again). */
export type KeptAnswer = Exclude<JobOutcome, { status: 200 }> | { status: 200 };

/** The answer a re-run gives again as it was; undefined for a 200, whose order it reads again. */
export function standingAnswer(kept: KeptAnswer): JobOutcome | undefined {
  return kept.status === 200 ? undefined : (kept as JobOutcome);
}

/** The Redis SET that keeps an answer: [key, value, time to live in ms]. */
export type AnswerRecord = [key: string, value: string, ttlMs: number];

/**
 * The answers jobs sent, kept in Redis for a while (set in the same pipeline as the reply, before
 * it). BullMQ runs a job again when its worker died after answering but before the job was
 * recorded as done (its lock lapses); by then a busy order may have had more writes than it keeps
 * applied job ids for, and the re-run would apply the change twice. A re-run that finds its answer
 * changes nothing.
 */
export class AnsweredJobs {
  constructor(
    private readonly prefix: string,
    /** As long as a job may be run again after its worker died: some lock periods. */
    private readonly ttlMs: number,
  ) {}

  record(jobId: string, outcome: JobOutcome): AnswerRecord {
    const kept: KeptAnswer = outcome.status === 200 ? { status: 200 } : outcome;
    return [this.key(jobId), JSON.stringify(kept), this.ttlMs];
  }

  async recall(redis: RedisClient, jobId: string): Promise<KeptAnswer | undefined> {
    const kept = await redis.get(this.key(jobId));
    return kept === null ? undefined : (JSON.parse(kept) as KeptAnswer);
  }

  private key(jobId: string): string {
    return `${this.prefix}:answered:${jobId}`;
  }
}
