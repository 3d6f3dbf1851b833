import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { WEBHOOK_QUEUE } from '@pos/shared/queue/webhook-queue';
import { sampleRows, statusUpdate } from '../support/http';
import { openTransitionQueues } from '../support/queues';
import { registerAt } from '../support/fixtures';
import { spawnRole, useStack } from '../support/stack';
import { eventually } from '../support/wait';
import { Receiver, startReceiver } from '../support/webhook-receiver';

/**
 * Webhooks and killed workers: an event comes from the transition that wrote it, through the
 * job's outbox, so a worker killed mid-transition or mid-delivery loses none (each arrives at
 * least once with the same webhook-id) and invents none.
 */
describe('webhooks and killed workers', () => {
  const stack = useStack(
    {
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms,200ms',
      JOB_LOCK_DURATION: '1s',
      JOB_TIMEOUT: '45s',
    },
    { worker: false },
  );
  const receivers: Receiver[] = [];

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  async function subscribed(name: string, events: string[]) {
    const r = await startReceiver();
    receivers.push(r);
    const { location, key } = await registerAt(stack, name);
    const sub = await stack.admin.createWebhook({ url: r.url, events, locationIds: [location.id] });
    r.secrets.push(sub.secret);
    return { r, location, key, sub };
  }

  it('a worker killed after the write, before its outbox went out: the re-run delivers the event, once', async () => {
    const { r, location, key } = await subscribed('Killed mid-transition', ['order.completed']);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const doomed = await spawnRole('worker', { ...stack.env, FAULT_INJECT: 'crash-after-apply' });
    const answer = statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED');
    expect(await doomed.exited).toBeNull(); // SIGKILL, after the MongoDB write
    expect(r.received).toHaveLength(0);

    const rescuer = await spawnRole('worker', stack.env);
    try {
      expect((await answer).status).toBe(200);
      await eventually(() => r.delivered().size === 1, 'the completion delivered by the re-run', 30_000);
      const [delivered] = [...r.delivered().values()];
      expect(delivered).toMatchObject({
        type: 'order.completed',
        data: { locationId: location.id, order: { number: order.number, state: 'COMPLETED', version: 1 } },
      });
      expect(new Set(r.received.map((w) => w.id)).size).toBe(1);
    } finally {
      expect(await rescuer.stop()).toBe(0);
    }
  }, 60_000);

  it('a worker killed after answering: the re-run offers the event again and it is queued once', async () => {
    const { r, location, key, sub } = await subscribed('Killed after answering', ['order.completed']);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const doomed = await spawnRole('worker', { ...stack.env, FAULT_INJECT: 'crash-after-answer' });
    expect((await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED')).status).toBe(200);
    expect(await doomed.exited).toBeNull();
    const rescuer = await spawnRole('worker', stack.env);
    try {
      await eventually(
        () => rescuer.output().includes('job run again after it had answered'),
        'the re-run of the answered job',
        30_000,
      );
      const { queues, close } = openTransitionQueues(stack.env);
      try {
        await eventually(
          async () => Object.values(await queues.jobCounts('active', 'waiting', 'delayed')).every((n) => n === 0),
          'the re-run done',
          30_000,
        );
      } finally {
        await close();
      }
      await eventually(() => r.delivered().size === 1, 'the completion delivered', 30_000);
      // The re-run announced the order again (same webhook-id, so no second delivery job): one attempt in all.
      await eventually(async () => (await stack.admin.listWebhookDeliveries(sub.id)).length >= 1, 'the attempt logged');
      const queue = new Queue(WEBHOOK_QUEUE, {
        connection: new Redis(stack.env.REDIS_URL!),
        prefix: stack.env.REDIS_PREFIX!,
      });
      try {
        await eventually(
          async () => Object.values(await queue.getJobCounts('waiting', 'active', 'delayed')).every((n) => n === 0),
          'the webhook queue settled',
        );
      } finally {
        await queue.close();
        await queue.disconnect();
      }
      expect(r.received).toHaveLength(1);
      expect(await stack.admin.listWebhookDeliveries(sub.id)).toHaveLength(1);
    } finally {
      expect(await rescuer.stop()).toBe(0);
    }
  }, 60_000);

  it('a worker killed before the write produces no event', async () => {
    const { r, location, key } = await subscribed('Killed before the write', ['order.completed', 'order.aborted']);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const doomed = await spawnRole('worker', { ...stack.env, FAULT_INJECT: 'crash-before-apply' });
    const answer = statusUpdate(stack.baseUrl, key, order.number, 'ABORTED');
    expect(await doomed.exited).toBeNull();
    const rescuer = await spawnRole('worker', stack.env);
    try {
      expect((await answer).status).toBe(200);
      await eventually(() => r.delivered().size === 1, 'the abort delivered', 30_000);
      expect([...r.delivered().values()].map((w) => w.type)).toEqual(['order.aborted']);
    } finally {
      expect(await rescuer.stop()).toBe(0);
    }
  }, 60_000);

  it('a worker killed mid-delivery: the next worker delivers it with the same webhook-id', async () => {
    const { r, location } = await subscribed('Killed mid-delivery', ['order.placed']);
    await r.setMode('hang');
    const doomed = await spawnRole('worker', stack.env);
    await stack.admin.createOrder(location.id, sampleRows);
    await eventually(() => r.received.length === 1, 'the delivery in flight');
    await doomed.kill();
    await r.setMode({ status: 200 });
    const rescuer = await spawnRole('worker', stack.env);
    try {
      await eventually(() => r.delivered().size === 1, 'the delivery taken over once its lock lapsed', 30_000);
      expect(new Set(r.received.map((w) => w.id)).size).toBe(1);
      expect(r.received.length).toBeGreaterThanOrEqual(2);
    } finally {
      expect(await rescuer.stop()).toBe(0);
    }
  }, 60_000);

  it('checks the address again at delivery: an endpoint that now resolves to a private address is refused', async () => {
    // Created while private addresses were allowed; the worker now forbids them (as after DNS rebinding).
    const { r, location, sub } = await subscribed('Rebound', ['order.placed']);
    const strict = await spawnRole('worker', { ...stack.env, WEBHOOK_ALLOW_PRIVATE: '0' });
    try {
      await stack.admin.createOrder(location.id, sampleRows);
      // (its relay takes the lease over once it has seen the killed workers' lease unrenewed for 10 s)
      await eventually(
        async () => (await stack.admin.listWebhookDeliveries(sub.id)).length >= 1,
        'an attempt logged',
        30_000,
      );
      const [entry] = await stack.admin.listWebhookDeliveries(sub.id);
      expect(entry!.error).toMatch(/resolves to 127\.0\.0\.1/);
      expect(entry!.statusCode).toBeUndefined();
      expect(r.received).toHaveLength(0);
    } finally {
      expect(await strict.stop()).toBe(0);
    }
  }, 60_000);
});
