import { Queue, type QueueOptions, type WorkerOptions } from 'bullmq';
import type { Logger } from '../log';
import type { RedisClient } from '../redis';
import { tracing, type SpanFields } from '../telemetry/tracing';
import type { JobDataOf, JobName } from './jobs';

/**
 * A Queue's or Worker's options with BullMQ's telemetry when tracing is on (unchanged when off).
 * Every Queue and Worker of the service is created through it, so that a queue added later is
 * traced, its jobs linked to what queued them, by using it.
 */
export function withTelemetry<T extends QueueOptions | WorkerOptions>(options: T): T {
  const bullmq = tracing()?.bullmq;
  return bullmq ? { ...options, telemetry: bullmq } : options;
}

/** One of the service's queues: traced (withTelemetry), a lost connection logged as `<what> queue connection error`. */
export function serviceQueue<T>(
  name: string,
  options: { connection: RedisClient; prefix: string },
  what: string,
  log: Logger,
): Queue<T> {
  const queue = new Queue<T>(name, withTelemetry(options));
  queue.on('error', (err: Error) => log.warn({ err: err.message }, `${what} queue connection error`));
  return queue;
}

/** What a span records of a work job: its name, its action's kind, its location and order; never its data. */
export function jobSpanFields(job: { name: JobName; data: JobDataOf<JobName> }): SpanFields {
  if (!('scope' in job.data)) return { 'pos.job.name': job.name };
  const { scope, orderNumber, action } = job.data;
  return {
    'pos.job.name': job.name,
    'pos.order.action': action.kind,
    'pos.location_id': scope.locationId,
    'pos.order_number': orderNumber,
  };
}
