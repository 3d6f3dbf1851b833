import { isCluster, publish, RedisClient } from '@pos/shared/redis';
import { GROUP_COMMIT_MAX, groupCommit } from '@pos/shared/store/group-commit';
import type { AnswerRecord } from './answered-jobs';

/** One command of a job's messages: a message on a channel, or the record of its answer. */
type Command = { publish: [channel: string, message: string] } | { record: AnswerRecord };

/**
 * The messages a job publishes to streams (location events), held until the job is done and then
 * sent together with its reply, in order, in one round trip to Redis instead of one each. In one
 * pipeline, Redis may write the reply to its node before a message to the others: a change every
 * node must have heard before the answer (a session's) is published apart (JobContext.nodes).
 * Holding them is safe: a job whose messages could not be sent fails and is run again,
 * and its re-run finds its id on the order and announces the order again. (The job's events for
 * the event log and webhooks are not messages: its write recorded them, events/outbox.ts.)
 */
export class JobMessages {
  private readonly messages: [channel: string, message: string][] = [];

  /** How many messages are held. */
  get size(): number {
    return this.messages.length;
  }

  /** Takes the place of Redis's PUBLISH for the job's publisher (Announcer). */
  publish(channel: string, message: string): Promise<number> {
    this.messages.push([channel, message]);
    return Promise.resolve(0);
  }

  /**
   * Sends what the job published, then the record of its answer (when it is kept), then its reply
   * (when a node waits for one), in that order. The record goes before the reply, so that a reply
   * sent is a reply recorded (see AnsweredJobs).
   */
  send(
    sender: MessageSender,
    record: AnswerRecord | undefined,
    reply?: [channel: string, message: string],
  ): Promise<void> {
    const commands: Command[] = this.messages.splice(0).map((message) => ({ publish: message }));
    if (record) commands.push({ record });
    if (reply) commands.push({ publish: reply });
    return sender.send(commands);
  }
}

/**
 * Sends jobs' messages for a worker. On one Redis, the messages of the jobs that finish together
 * go in one pipeline (group-commit.ts), each job's in its order. On a cluster each command is its
 * own, in order (a pipeline may not span slots; a message is an SPUBLISH to its channel's shard).
 */
export class MessageSender {
  constructor(private readonly redis: RedisClient) {}

  async send(commands: Command[]): Promise<void> {
    if (commands.length === 0) return;
    if (!isCluster(this.redis)) return void (await this.pipelines.load(commands));
    for (const command of commands) {
      if ('record' in command) await this.redis.set(command.record[0], command.record[1], 'PX', command.record[2]);
      else await publish(this.redis, ...command.publish);
    }
  }

  private readonly pipelines = groupCommit<Command[], true>(async (jobs) => {
    const pipeline = this.redis.pipeline();
    for (const commands of jobs) {
      for (const command of commands) {
        if ('record' in command) pipeline.set(command.record[0], command.record[1], 'PX', command.record[2]);
        else pipeline.publish(...command.publish);
      }
    }
    const results = (await pipeline.exec()) ?? [];
    let next = 0;
    return jobs.map((commands) => {
      const failed = results.slice(next, (next += commands.length)).find(([err]) => err)?.[0];
      return failed ?? (true as const);
    });
  }, GROUP_COMMIT_MAX);
}
