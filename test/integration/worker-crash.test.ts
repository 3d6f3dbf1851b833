import { call, sampleRows } from '../support/http';
import { openDb, registerAt } from '../support/fixtures';
import { spawnRole, startStack } from '../support/stack';

/**
 * A worker killed in the middle of a job: BullMQ hands the job to the next worker once the
 * lock lapses, and the update is applied exactly once.
 */
describe.each(['crash-after-apply', 'crash-before-apply'] as const)('a worker killed mid-job (%s)', (fault) => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let db: Awaited<ReturnType<typeof openDb>>;

  beforeAll(async () => {
    stack = await startStack({ JOB_LOCK_DURATION: '1s', JOB_TIMEOUT: '45s' }, { worker: false });
    db = await openDb(stack.env);
  });
  afterAll(async () => {
    await db.close();
    await stack.close();
  });

  it('the failure report is applied exactly once when a worker comes back', async () => {
    const { location, key } = await registerAt(stack, 'Crashy', 5);
    const order = await stack.admin.createOrder(location.id, sampleRows);

    const doomed = await spawnRole('worker', { ...stack.env, FAULT_INJECT: fault });
    const answer = call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, { apiKey: key, body: { reason: 'paper out' } });
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
