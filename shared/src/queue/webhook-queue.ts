/**
 * The webhook delivery queue's contract: its name, prefix, job data and options. Deliveries have
 * a queue of their own, so that a slow endpoint never holds a slot of the transition queue.
 */
import type { Queue } from 'bullmq';
import type { RedisConfig } from '../config';
import type { Logger } from '../log';
import type { RedisClient } from '../redis';
import { queuePrefix } from './prefix';
import { serviceQueue } from './telemetry';

export const WEBHOOK_QUEUE = 'webhook-delivery';
/** One delivery (a test event, a redelivery, or the relay's of the release before 0.6.0). */
export const WEBHOOK_JOB = 'deliver';
/** The deliveries one relay pass owes one subscription, attempted together (see webhooks/delivery-queue.ts). */
export const WEBHOOK_BATCH_JOB = 'deliver-batch';
/** The name of the custom backoff strategy the delivery worker implements (WEBHOOK_RETRY_SCHEDULE). */
export const WEBHOOK_BACKOFF = 'webhook-schedule';

export interface DeliveryJobData {
  subscriptionId: string;
  /** The `webhook-id` header. */
  webhookId: string;
  type: string;
  /** The JSON body, fixed when the event was fanned out: every attempt sends the same bytes. */
  body: string;
  /** The recorded event it delivers (absent for a test event): settling the delivery settles the event's debt. */
  eventId?: string;
  redelivery?: true;
}

/** One delivery of a batch: what a DeliveryJobData carries but its subscription, and the attempts it has had. */
export interface BatchItem {
  webhookId: string;
  type: string;
  body: string;
  eventId?: string;
  attempts: number;
}

/** A subscription's deliveries attempted together: those a relay pass queued, or those a run put back for later. */
export interface DeliveryBatchData {
  subscriptionId: string;
  items: BatchItem[];
}

export type WebhookJobData = DeliveryJobData | DeliveryBatchData;

export const isBatch = (data: WebhookJobData): data is DeliveryBatchData =>
  Array.isArray((data as DeliveryBatchData).items);

/**
 * A delivery's job id is its webhook-id, so that an event offered again (a re-run job announces its
 * order again) adds nothing while the first job is kept: completed jobs are kept an hour, longer
 * than any re-run comes (a few lock periods). A redelivery gets an id of its own.
 */
const KEEP_COMPLETED = { age: 3600 };
const KEEP_FAILED = { age: 7 * 86_400, count: 10_000 };

export const webhookPrefix = (redis: Pick<RedisConfig, 'prefix' | 'cluster'>): string => queuePrefix(redis, 'webhooks');

export function createWebhookQueue(
  connection: RedisClient,
  redis: Pick<RedisConfig, 'prefix' | 'cluster'>,
  log: Logger,
): Queue<WebhookJobData> {
  return serviceQueue<WebhookJobData>(WEBHOOK_QUEUE, { connection, prefix: webhookPrefix(redis) }, 'webhook', log);
}

/** The first attempt at once, then one per wait of WEBHOOK_RETRY_SCHEDULE. */
export function deliveryJobOptions(retryScheduleMs: number[], jobId: string) {
  return {
    jobId,
    attempts: retryScheduleMs.length + 1,
    backoff: { type: WEBHOOK_BACKOFF },
    removeOnComplete: KEEP_COMPLETED,
    removeOnFail: KEEP_FAILED,
  };
}

/**
 * A batch's job: run again by BullMQ only when a run failed as a whole (MongoDB or Redis down),
 * a few times, sooner than the deliveries' own schedule, which the runs keep item by item.
 */
export function batchJobOptions(jobId: string, delayMs: number) {
  return {
    jobId,
    ...(delayMs > 0 ? { delay: delayMs } : {}),
    attempts: 8,
    backoff: { type: 'exponential', delay: 1_000 },
    removeOnComplete: KEEP_COMPLETED,
    removeOnFail: KEEP_FAILED,
  };
}

/** The wait before attempt `attemptsMade + 1` (BullMQ's custom backoff strategy). */
export function retryDelay(retryScheduleMs: number[], attemptsMade: number): number {
  return retryScheduleMs[Math.min(attemptsMade, retryScheduleMs.length) - 1] ?? 0;
}
