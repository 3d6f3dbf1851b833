import { randomUUID } from 'node:crypto';
import { call, sampleRows } from '../support/http';
import { registerAt, useDb } from '../support/fixtures';
import { openTransitionQueues } from '../support/queues';
import { spawnRole, useStack } from '../support/stack';
import { eventually } from '../support/wait';

/**
 * A worker killed in the middle of a job: BullMQ hands the job to the next worker once the
 * lock lapses, and the update is applied exactly once.
 */
describe.each(['crash-after-apply', 'crash-before-apply'] as const)('a worker killed mid-job (%s)', (fault) => {
  const stack = useStack({ JOB_LOCK_DURATION: '1s', JOB_TIMEOUT: '45s' }, { worker: false });
  const db = useDb(stack);

  it('the failure report is applied exactly once when a worker comes back', async () => {
    const { location, key } = await registerAt(stack, 'Crashy', 5);
    const order = await stack.admin.createOrder(location.id, sampleRows);

    const doomed = await spawnRole('worker', { ...stack.env, FAULT_INJECT: fault });
    const answer = call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, {
      apiKey: key,
      body: { reason: 'paper out' },
    });
    const code = await doomed.exited;
    // Only the fault kills with SIGKILL (its log line may not make it out before the signal).
    expect({ code, signal: doomed.process.signalCode }).toEqual({ code: null, signal: 'SIGKILL' });

    const midway = await db.order(location.id, order.number);
    expect(midway!.failureCount).toBe(fault === 'crash-after-apply' ? 1 : 0);

    const rescuer = await spawnRole('worker', stack.env);
    try {
      const res = await answer;
      expect(res.status).toBe(200);
      expect(res.json()).toMatchObject({ number: order.number, state: 'PLACED', failedTime: expect.any(String) });
      const stored = await db.order(location.id, order.number);
      expect(stored).toMatchObject({ failureCount: 1, version: 1 });
      expect(stored!.appliedJobs).toHaveLength(1);
    } finally {
      expect(await rescuer.stop()).toBe(0);
    }
  });
});

/**
 * A worker killed after its answer went out but before BullMQ recorded the job as done: the job
 * is run again once its lock lapses, by which time the order may have had more writes than it
 * keeps applied job ids for (64). The re-run finds the answer it gave and changes nothing.
 */
describe('a worker killed after answering (crash-after-answer)', () => {
  const LATER_REPORTS = 70;
  const stack = useStack({ JOB_LOCK_DURATION: '1s' }, { worker: false });
  const db = useDb(stack);

  it('the answered report counts once, though the order had 70 writes before the re-run', async () => {
    const { location, key } = await registerAt(stack, 'Answered', 1000);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const report = (headers: Record<string, string> = {}) =>
      call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, {
        apiKey: key,
        headers,
        body: { reason: 'paper out' },
      });

    // The killed worker's lock (its JOB_LOCK_DURATION) outlives it by 15 to 30 s: the later
    // reports are all written before BullMQ hands its job on (BullMQ also spaces the stalled-job
    // checks of all workers by the last checker's interval).
    const doomed = await spawnRole('worker', {
      ...stack.env,
      FAULT_INJECT: 'crash-after-answer',
      JOB_LOCK_DURATION: '30s',
    });
    // With a key, as a register that retries would send it. Its re-run comes long after its deadline,
    // but a job run again is never refused as late: its first run may have written.
    expect((await report({ 'Idempotency-Key': randomUUID() })).status).toBe(200);
    expect(await doomed.exited).toBeNull(); // SIGKILL, its job still active in BullMQ
    const rescuer = await spawnRole('worker', stack.env);
    try {
      for (let i = 0; i < LATER_REPORTS; i++) expect((await report()).status).toBe(200);
      const { queues, close } = openTransitionQueues(stack.env);
      try {
        await eventually(
          async () => {
            const counts = await queues.jobCounts('active', 'waiting', 'delayed');
            return Object.values(counts).every((n) => n === 0);
          },
          "the killed worker's job run again",
          45_000,
        );
      } finally {
        await close();
      }
      expect(rescuer.output()).toContain('job run again after it had answered');
      const stored = await db.order(location.id, order.number);
      expect({ failures: stored!.failureCount, writes: stored!.version }).toEqual({
        failures: LATER_REPORTS + 1,
        writes: LATER_REPORTS + 1,
      });
    } finally {
      expect(await rescuer.stop()).toBe(0);
    }
  }, 90_000);
});
