import { isCluster, publish, RedisClient } from '@pos/shared/redis';
import type { AnswerRecord } from './answered-jobs';

/**
 * The messages a job publishes to streams (location events, session changes), held until the job
 * is done and then sent together with its reply, in order, in one round trip to Redis instead of
 * one each. Holding them is safe: a job whose messages could not be sent fails and is run again,
 * and its re-run finds its id on the order and announces the order again. (The job's events for
 * the event log and webhooks are not messages: its write recorded them, events/outbox.ts.)
 */
export class JobMessages {
  private readonly messages: [channel: string, message: string][] = [];

  /** How many messages are held. */
  get size(): number {
    return this.messages.length;
  }

  /** Takes the place of Redis's PUBLISH for the job's publisher (EventPublisher). */
  publish(channel: string, message: string): Promise<number> {
    this.messages.push([channel, message]);
    return Promise.resolve(0);
  }

  /**
   * Sends what the job published, then the record of its answer (when it is kept), then its reply
   * (when a node waits for one): one pipeline on one Redis. The record goes before the reply, so that a reply
   * sent is a reply recorded (see AnsweredJobs). On a cluster each is its own command, in order
   * (a pipeline may not span slots; a message is an SPUBLISH to its channel's shard).
   */
  async send(redis: RedisClient, record: AnswerRecord | undefined, reply?: [channel: string, message: string]): Promise<void> {
    const messages = this.messages.splice(0);
    if (isCluster(redis)) {
      for (const [channel, message] of messages) await publish(redis, channel, message);
      if (record) await redis.set(record[0], record[1], 'PX', record[2]);
      if (reply) await publish(redis, ...reply);
      return;
    }
    const pipeline = redis.pipeline();
    for (const [channel, message] of messages) pipeline.publish(channel, message);
    if (record) pipeline.set(record[0], record[1], 'PX', record[2]);
    if (reply) pipeline.publish(...reply);
    for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
  }
}
