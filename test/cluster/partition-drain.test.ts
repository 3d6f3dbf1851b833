/**
 * Changing QUEUE_PARTITIONS on a running deployment (docs/deployment.md#changing-the-partition-count):
 * jobs waiting in the old layout's queues are stranded by workers that consume only the new
 * layout, and finished by workers that also drain the old one (QUEUE_DRAIN_PARTITIONS), which
 * remove the old layout's job schedulers and say when its queues are empty.
 */
import { Cluster } from 'ioredis';
import { Queue } from 'bullmq';
import { TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import { partitionLayout } from '@pos/shared/queue/partitions';
import { onCluster, portsOf } from '../support/cluster';
import { registerAt } from '../support/fixtures';
import { call, HttpResult, sampleRows } from '../support/http';
import { stopRoles } from '../support/roles';
import { spawnRole, startStack, stackEnv } from '../support/stack';
import { eventually } from '../support/wait';

const LIVE = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

describe('changing the partition count of a running deployment', () => {
  it('the old layout’s jobs wait for a worker that drains it, and are all answered once it comes', async () => {
    // One deployment (database, prefix, token, key secret) seen with two partition counts.
    const base = stackEnv(onCluster({ JOB_TIMEOUT: '60s' }));
    const fixed = {
      MONGO_DB: base.MONGO_DB!,
      REDIS_PREFIX: base.REDIS_PREFIX!,
      ADMIN_TOKEN: base.ADMIN_TOKEN!,
      API_KEY_SECRET: base.API_KEY_SECRET!,
    };
    const oldApi = await startStack({ ...base, ...fixed, QUEUE_PARTITIONS: '2' }, { worker: false });
    const newApi = await startStack({ ...base, ...fixed, QUEUE_PARTITIONS: '3' }, { worker: false });
    const connection = new Cluster(
      portsOf(process.env.TEST_REDIS_CLUSTER_URL!).map((port) => ({ host: '127.0.0.1', port })),
    );
    const oldQueues = partitionLayout(fixed.REDIS_PREFIX, 2, true).map(
      (p) => new Queue(TRANSITION_QUEUE, { connection, prefix: p.prefix }),
    );
    const liveJobs = async () => {
      const counts = await Promise.all(oldQueues.map((q) => q.getJobCounts(...LIVE)));
      return counts.reduce((sum, c) => sum + LIVE.reduce((n, state) => n + (c[state] ?? 0), 0), 0);
    };
    let roles: Array<Awaited<ReturnType<typeof spawnRole>>> = [];
    try {
      const registers = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          const { key, location } = await registerAt(oldApi, `Drain ${i}`);
          return { key, order: await oldApi.admin.createOrder(location.id, sampleRows) };
        }),
      );
      // A schedule left on the old layout (the current layout's first partition carries schedules).
      await oldQueues[0]!.upsertJobScheduler('old-schedule', { every: 3_600_000 }, { name: 'noop', data: {} });

      // Reports through a node still on two partitions: queued, and nothing consumes them yet.
      const pending: Array<Promise<HttpResult>> = registers.map(({ key, order }) =>
        call('POST', `${oldApi.baseUrl}/orders/${order.number}/failure`, {
          apiKey: key,
          body: { reason: 'old layout' },
        }),
      );
      // The reports, and the schedule's next (delayed) job.
      const queued = registers.length + 1;
      await eventually(async () => (await liveJobs()) === queued, 'the reports queued in the old layout');

      // A worker on the new layout alone serves the new layout, and strands the old one.
      roles.push(await spawnRole('worker', { ...base, ...fixed, QUEUE_PARTITIONS: '3' }));
      const served = await call('POST', `${newApi.baseUrl}/orders/${registers[0]!.order.number}/failure`, {
        apiKey: registers[0]!.key,
        body: {},
      });
      expect(served.status).toBe(200);
      expect(await liveJobs()).toBe(queued);
      await roles[0]!.stop();

      // A worker that drains the old layout too: every waiting report is answered 200, once.
      const drainer = await spawnRole('worker', {
        ...base,
        ...fixed,
        QUEUE_PARTITIONS: '3',
        QUEUE_DRAIN_PARTITIONS: '2',
      });
      roles = [drainer];
      const answers = await Promise.all(pending);
      expect(answers.map((a) => a.status)).toEqual(registers.map(() => 200));
      expect(answers.map((a) => a.json().number)).toEqual(registers.map((r) => r.order.number));
      expect(await liveJobs()).toBe(0);
      expect(await oldQueues[0]!.getJobSchedulersCount()).toBe(0);
      await eventually(
        () => drainer.output().includes('"msg":"drained partitions are empty"'),
        'the drained log line',
        15_000,
      );
      const drained = drainer
        .output()
        .split('\n')
        .find((line) => line.includes('"msg":"drained partitions are empty"'))!;
      expect(JSON.parse(drained).partitions).toEqual(['p0of2', 'p1of2']);
      expect(drainer.output()).toContain('"scheduler":"old-schedule"');

      // The new layout goes on as before.
      const after = await call('POST', `${newApi.baseUrl}/orders/${registers[1]!.order.number}/failure`, {
        apiKey: registers[1]!.key,
        body: {},
      });
      expect(after.status).toBe(200);
      expect(after.json().number).toBe(registers[1]!.order.number);
    } finally {
      await stopRoles(roles, 'stop');
      await Promise.all(oldQueues.map((q) => q.close()));
      connection.disconnect();
      await oldApi.close();
      await newApi.close();
    }
  });
});
