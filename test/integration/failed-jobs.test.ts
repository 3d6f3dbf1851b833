/**
 * Failed jobs are kept for a while (Bull Board, a keyed retry's look-up), bounded by count as well
 * as by age (JOB_KEEP_FAILED per transition queue partition): a flood of failing jobs, such as every
 * retry during a MongoDB outage, cannot fill a `noeviction` Redis. The jobs here fail for real,
 * in the stack's worker (malformed data fails for good at once).
 */
import { Job } from 'bullmq';
import { JOB } from '@pos/shared/queue/jobs';
import type { TransitionQueues } from '@pos/shared/queue/transition-queue';
import { registerAt } from '../support/fixtures';
import { sampleRows, statusUpdate } from '../support/http';
import { OpenedQueues, openTransitionQueues } from '../support/queues';
import { useStack } from '../support/stack';
import { eventually } from '../support/wait';

describe('failed jobs', () => {
  const stack = useStack({ JOB_KEEP_FAILED: '3' });
  let opened: OpenedQueues;
  let queues: TransitionQueues;

  beforeAll(async () => {
    // the deployment's transition queue, with the job options its API nodes add jobs with
    opened = openTransitionQueues(stack.env);
    queues = opened.queues;
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('are kept up to JOB_KEEP_FAILED: twelve failures leave three', async () => {
    const queue = queues.current[0]!.queue;
    const added = [];
    for (let i = 0; i < 12; i++) added.push(await queue.add(JOB.sessionClose, { sessionId: { $ne: `attempt-${i}` } }));
    const settled = async () => {
      const counts = await queues.jobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    };
    await eventually(settled, 'every job taken and finished', 15_000);
    expect(await queues.jobCounts('failed')).toEqual({ failed: 3 });
    const kept = await queue.getFailed();
    expect(kept.map((job) => job.failedReason)).toEqual(Array(3).fill('malformed job data: /sessionId must be string'));
    // the others are removed for good, not merely out of the failed list
    const gone = (await Promise.all(added.map((job) => Job.fromId(queue, job.id!)))).filter((job) => job === undefined);
    expect(gone).toHaveLength(9);
  });

  it("the API's jobs carry the bound", async () => {
    const { location, key } = await registerAt(stack, 'Bounded');
    const order = await stack.admin.createOrder(location.id, sampleRows);
    expect((await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED')).status).toBe(200);
    let jobs: Job[] = [];
    await eventually(
      async () => (jobs = await queues.current[0]!.queue.getCompleted()).length > 0,
      'the job recorded as completed',
    );
    expect(jobs[0]!.opts.removeOnFail).toEqual({ age: 7 * 24 * 3600, count: 3 });
  });
});
