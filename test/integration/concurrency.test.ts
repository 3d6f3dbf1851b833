import { call, sampleRows } from '../support/http';
import { registerAt, useDb } from '../support/fixtures';
import { spawnRole, useStack } from '../support/stack';

describe('concurrent conflicting updates to one order', () => {
  const stack = useStack({ WORKER_CONCURRENCY: '8' });
  const db = useDb(stack);
  let extraWorker: Awaited<ReturnType<typeof spawnRole>>;

  beforeAll(async () => {
    // A second worker process: the two race on the same order for real.
    extraWorker = await spawnRole('worker', stack.env);
  });
  afterAll(async () => {
    await extraWorker.stop();
  });

  it('exactly one outcome wins; the others get 409 or an idempotent 200; the version only grows', async () => {
    const { location, key } = await registerAt(stack, 'Busy', 100);
    for (let round = 0; round < 5; round++) {
      const order = await stack.admin.createOrder(location.id, sampleRows);
      const registers = [
        'COMPLETED',
        'ABORTED',
        'COMPLETED',
        'ABORTED',
        'COMPLETED',
        'ABORTED',
        'COMPLETED',
        'ABORTED',
      ];
      const results = await Promise.all(
        registers.map((newState) =>
          call('PUT', `${stack.baseUrl}/orders/${order.number}/statusupdate`, { apiKey: key, body: { newState } }).then(
            (res) => ({
              newState,
              res,
            }),
          ),
        ),
      );
      const stored = await db.order(location.id, order.number);
      const winner = stored!.state;
      expect(['COMPLETED', 'ABORTED']).toContain(winner);
      expect(stored!.version).toBe(1); // one write, whoever won
      for (const { newState, res } of results) {
        if (newState === winner) {
          expect(res.status).toBe(200);
          expect(res.json().state).toBe(winner);
        } else {
          expect(res.status).toBe(409);
          expect(res.json().detail).toBe(`Order is ${winner}; cannot move to ${newState}`);
        }
      }
      expect(new Set(results.filter((r) => r.res.status === 200).map((r) => r.res.json().completeTime)).size).toBe(1);
    }
  });

  it('concurrent failure reports each count once: the version grows by exactly their number', async () => {
    const { location, key } = await registerAt(stack, 'Flaky', 100);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const reports = 12;
    const results = await Promise.all(
      Array.from({ length: reports }, () =>
        call('POST', `${stack.baseUrl}/orders/${order.number}/failure`, { apiKey: key }),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const stored = await db.order(location.id, order.number);
    expect(stored).toMatchObject({ failureCount: reports, version: reports, state: 'PLACED' });
  });
});
