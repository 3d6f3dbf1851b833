import { isCluster, publish, RedisClient } from '@pos/shared/redis';

/**
 * The messages a job publishes (location events, session changes), held until the job is done and
 * then sent together with its reply, in order, in one round trip to Redis instead of one each.
 * Holding them is safe: a job whose messages could not be sent fails and is run again, and its
 * re-run finds its id on the order and announces the order again.
 */
export class Outbox {
  private readonly messages: [channel: string, message: string][] = [];

  /** Takes the place of Redis's PUBLISH for the job's publisher (EventPublisher). */
  publish(channel: string, message: string): Promise<number> {
    this.messages.push([channel, message]);
    return Promise.resolve(0);
  }

  /**
   * Sends what the job published, then `last` (its reply) when given: one pipeline on one Redis.
   * On a cluster each is an SPUBLISH to its own channel's shard, in order (a pipeline may not
   * span slots).
   */
  async send(redis: RedisClient, last?: [channel: string, message: string]): Promise<void> {
    const all = last ? [...this.messages, last] : this.messages;
    this.messages.length = 0;
    if (all.length === 0) return;
    if (all.length === 1 || isCluster(redis)) {
      for (const [channel, message] of all) await publish(redis, channel, message);
      return;
    }
    const pipeline = redis.pipeline();
    for (const [channel, message] of all) pipeline.publish(channel, message);
    for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
  }
}
