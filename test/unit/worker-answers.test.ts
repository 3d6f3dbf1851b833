/**
 * What the worker keeps and sends for each job: the answered-jobs record (kept answers, and which
 * stand on a re-run), the order cache, and the job's messages, sent with its record and
 * its reply together (here through a recording stand-in for the Redis pipeline or cluster).
 */
import type { RedisClient } from '@pos/shared/redis';
import type { JobOutcome } from '@pos/shared/queue/jobs';
import { problems } from '@pos/shared/domain/problem';
import { AnsweredJobs, standingAnswer } from '@pos/worker/transitions/answered-jobs';
import { OrderCache } from '@pos/worker/transitions/order-cache';
import { JobMessages, MessageSender } from '@pos/worker/transitions/job-messages';
import { LOCATION, orderDoc } from '../support/fake-job-context';

/** Records what a pipeline was given, in order; `failing` makes exec report that command's error. */
function recordingRedis(failing?: string) {
  const commands: string[][] = [];
  let execs = 0;
  const pipeline = () => {
    const own: string[][] = [];
    const add = (command: string[]) => (commands.push(command), own.push(command));
    return {
      publish: (channel: string, message: string) => add(['publish', channel, message]),
      set: (...args: (string | number)[]) => add(['set', ...args.map(String)]),
      exec: async () => {
        execs += 1;
        return own.map(([name, key]) => [
          name === failing || key === failing ? new Error(`${name} failed`) : null,
          'OK',
        ]);
      },
    };
  };
  const get = async (key: string) =>
    key === 'pos:answered:job-1' ? JSON.stringify({ status: 409, problem: problems.conflict('no') }) : null;
  // a stand-in: the job's messages and the record use these calls alone
  const redis = { pipeline, get } as unknown as RedisClient;
  return { redis, commands, execs: () => execs };
}

function recordingCluster() {
  const commands: string[][] = [];
  const cluster = {
    isCluster: true,
    spublish: async (channel: string, message: string) => commands.push(['spublish', channel, message]),
    set: async (...args: (string | number)[]) => commands.push(['set', ...args.map(String)]),
  } as unknown as RedisClient;
  return { cluster, commands };
}

describe('answered jobs', () => {
  const answers = new AnsweredJobs('pos', 30_000);

  it("keeps a job's answer whole, but a 200 without its order (a re-run reads the order again)", () => {
    const conflict: JobOutcome = { status: 409, problem: problems.conflict('Order is COMPLETED; cannot recover') };
    expect(answers.record('job-1', conflict)).toEqual(['pos:answered:job-1', JSON.stringify(conflict), 30_000]);
    expect(answers.record('job-2', { status: 200, body: { number: 1, state: 'PLACED' } })).toEqual([
      'pos:answered:job-2',
      '{"status":200}',
      30_000,
    ]);
  });

  it('lets every kept answer but a 200 stand on a re-run', async () => {
    expect(standingAnswer({ status: 200 })).toBeUndefined();
    expect(standingAnswer({ status: 204 })).toEqual({ status: 204 });
    const { redis } = recordingRedis();
    const kept = await answers.recall(redis, 'job-1');
    expect(kept && standingAnswer(kept)).toEqual({ status: 409, problem: problems.conflict('no') });
    expect(await answers.recall(redis, 'job-9')).toBeUndefined();
  });
});

describe('order cache', () => {
  it('gives an order back only to a scope that may act on it: a customer, only its own', () => {
    const cache = new OrderCache();
    const mine = orderDoc(1, { sessionId: 's-1' });
    cache.set(mine);
    cache.set(orderDoc(2));
    expect(cache.get({ locationId: LOCATION }, 1)).toBe(mine);
    expect(cache.get({ locationId: LOCATION, sessionId: 's-1' }, 1)).toBe(mine);
    expect(cache.get({ locationId: LOCATION, sessionId: 's-2' }, 1)).toBeUndefined();
    expect(cache.get({ locationId: LOCATION, sessionId: 's-1' }, 2)).toBeUndefined();
    expect(cache.get({ locationId: 'elsewhere' }, 1)).toBeUndefined();
  });

  it('keeps the last version it saw, and forgets an order on request', () => {
    const cache = new OrderCache();
    cache.set(orderDoc(1));
    const newer = orderDoc(1, { version: 3, state: 'COMPLETED' });
    cache.set(newer);
    expect(cache.get({ locationId: LOCATION }, 1)).toBe(newer);
    cache.forget(newer);
    expect(cache.get({ locationId: LOCATION }, 1)).toBeUndefined();
  });
});

describe('job messages', () => {
  const record: [string, string, number] = ['pos:answered:job-1', '{"status":204}', 30_000];

  it("holds the job's messages, then sends them, the answer's record and the reply in that order, in one pipeline", async () => {
    const messages = new JobMessages();
    expect(await messages.publish('pos:loc:a', 'first')).toBe(0);
    await messages.publish('pos:sessions', 'second');
    const { redis, commands, execs } = recordingRedis();
    expect(commands).toEqual([]); // nothing is sent before the job is done
    await messages.send(new MessageSender(redis), record, ['pos:reply:node', 'reply']);
    expect(commands).toEqual([
      ['publish', 'pos:loc:a', 'first'],
      ['publish', 'pos:sessions', 'second'],
      ['set', 'pos:answered:job-1', '{"status":204}', 'PX', '30000'],
      ['publish', 'pos:reply:node', 'reply'],
    ]);
    expect(execs()).toBe(1);
    // sent once: a second send has only its own record
    await messages.send(new MessageSender(redis), record);
    expect(commands.slice(4)).toEqual([['set', 'pos:answered:job-1', '{"status":204}', 'PX', '30000']]);
  });

  it('fails the job when Redis refused any of it (the job is run again and announces again)', async () => {
    const messages = new JobMessages();
    await messages.publish('pos:loc:a', 'event');
    await expect(
      messages.send(new MessageSender(recordingRedis('set').redis), record, ['pos:reply:node', 'reply']),
    ).rejects.toThrow('set failed');
  });

  it('sends the messages of jobs that finish together in one pipeline, each in its order, and fails only the job Redis refused', async () => {
    const { redis, commands, execs } = recordingRedis('pos:loc:b');
    const sender = new MessageSender(redis);
    const jobs = ['a', 'b', 'c'].map((name) => {
      const messages = new JobMessages();
      void messages.publish(`pos:loc:${name}`, `event ${name}`);
      return messages.send(sender, undefined, [`pos:reply:${name}`, `reply ${name}`]);
    });
    const settled = await Promise.allSettled(jobs);
    expect(execs()).toBe(1);
    expect(commands.map(([, channel]) => channel)).toEqual([
      'pos:loc:a',
      'pos:reply:a',
      'pos:loc:b',
      'pos:reply:b',
      'pos:loc:c',
      'pos:reply:c',
    ]);
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('on a cluster sends each alone, in the same order (a pipeline may not span slots)', async () => {
    const messages = new JobMessages();
    await messages.publish('pos:loc:a', 'event');
    const { cluster, commands } = recordingCluster();
    await messages.send(new MessageSender(cluster), record, ['pos:reply:node', 'reply']);
    expect(commands).toEqual([
      ['spublish', 'pos:loc:a', 'event'],
      ['set', 'pos:answered:job-1', '{"status":204}', 'PX', '30000'],
      ['spublish', 'pos:reply:node', 'reply'],
    ]);
  });
});
