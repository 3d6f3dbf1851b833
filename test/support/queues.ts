/** A deployment's transition queues, opened from a test as its API nodes open them. */
import Redis from 'ioredis';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { queueLayout, TransitionQueues } from '@pos/shared/queue/transition-queue';
import type { StackEnv } from './stack';

export interface OpenedQueues {
  /** With the job options the API adds jobs with (JOB_KEEP_FAILED and the rest). */
  queues: TransitionQueues;
  /** Closes the queues and their connection. */
  close(): Promise<void>;
}

/** The deployment's transition queues on a Redis connection of their own. */
export function openTransitionQueues(env: StackEnv): OpenedQueues {
  const redis = new Redis(env.REDIS_URL!, { maxRetriesPerRequest: null });
  const config = loadConfig(env);
  const queues = new TransitionQueues(
    redis,
    queueLayout(config),
    createLogger('silent', 'test'),
    config.queue.jobKeepFailed,
  );
  return {
    queues,
    async close() {
      await queues.close();
      redis.disconnect();
    },
  };
}
