/**
 * Jobs that break the queue contract, added by whoever can reach Redis or a writable Bull Board:
 * the worker acts on none of them, fails each for good (no retry) with a log line, and the
 * sessions and orders they aimed at stay as they were, as seen over HTTP.
 */
import { Job, Queue } from 'bullmq';
import { JOB } from '@pos/shared/queue/jobs';
import { customerAt } from '../support/customer';
import { registerAt } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { OpenedQueues, openTransitionQueues } from '../support/queues';
import { ChildRole, spawnRole, useStack } from '../support/stack';
import { eventually } from '../support/wait';

describe('a worker given malformed jobs', () => {
  const stack = useStack({}, { worker: false });
  let worker: ChildRole;
  let opened: OpenedQueues;
  let queue: Queue;

  beforeAll(async () => {
    worker = await spawnRole('worker', stack.env);
    // the one queue of a one-Redis deployment, as an intruder would open it
    opened = openTransitionQueues(stack.env);
    queue = opened.queues.current[0]!.queue;
  });
  afterAll(async () => {
    await opened?.close();
    await worker?.stop();
  });

  /** Adds a job as an intruder would, and waits for the worker to settle it. */
  async function settled(name: string, data: unknown): Promise<Job> {
    const job = await queue.add(name, data);
    await eventually(
      async () => ['failed', 'completed'].includes(await job.getState()),
      `job ${job.id} settled`,
      15_000,
    );
    return (await Job.fromId(queue, job.id!))!;
  }

  const expectFailedForGood = async (job: Job, fault: RegExp) => {
    expect(await job.getState()).toBe('failed');
    expect(job.attemptsMade).toBe(1); // five attempts are allowed: it was not retried
    expect(job.failedReason).toMatch(fault);
  };

  it('closes no session through a MongoDB operator in a session id', async () => {
    const register = await registerAt(stack, 'Operators');
    const customer = await customerAt(stack, register.location.id, 5, 2);
    const job = await settled(JOB.sessionClose, { sessionId: { $ne: null } });
    await expectFailedForGood(job, /^malformed job data: \/sessionId must be string$/);

    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: register.key })).status).toBe(200);
    expect(
      (await call('POST', `${customer.url}/commands`, { apiKey: customer.key, body: { kind: 'READ_TABLE_STATE' } }))
        .status,
    ).toBe(201);
  });

  it('changes no order through an operator, a string for a number, or an unknown action', async () => {
    const register = await registerAt(stack, 'Orders');
    const locationId = register.location.id;
    const order = await stack.admin.createOrder(locationId, sampleRows);
    const abort = { kind: 'status', newState: 'ABORTED' };
    const cases: [unknown, RegExp][] = [
      [
        { scope: { locationId: { $gt: '' } }, orderNumber: order.number, action: abort },
        /\/scope\/locationId must be string/,
      ],
      [
        { scope: { locationId, sessionId: { $exists: false } }, orderNumber: order.number, action: abort },
        /\/scope\/sessionId must be string/,
      ],
      [{ scope: { locationId }, orderNumber: String(order.number), action: abort }, /\/orderNumber must be integer/],
      [{ scope: { locationId }, orderNumber: order.number, action: { kind: 'status', newState: 'EATEN' } }, /\/action/],
      [{ scope: { locationId }, orderNumber: order.number, action: { kind: 'teleport' } }, /\/action/],
      [
        { scope: { locationId }, orderNumber: order.number, action: abort, extra: 1 },
        /must NOT have additional properties/,
      ],
      // a reply channel that is no reply channel: the worker would publish into a location's events
      [
        {
          scope: { locationId },
          orderNumber: order.number,
          action: abort,
          replyTo: `${stack.env.REDIS_PREFIX}:loc:${locationId}`,
        },
        /\/replyTo/,
      ],
    ];
    for (const [data, fault] of cases) await expectFailedForGood(await settled(JOB.orderAction, data), fault);
    await expectFailedForGood(await settled('order-erase', { scope: { locationId } }), /unknown job name/);

    const work = await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: register.key });
    expect(work.json()).toEqual([order]);
  });

  it('still applies a job that keeps the contract', async () => {
    const register = await registerAt(stack, 'Valid');
    const order = await stack.admin.createOrder(register.location.id, sampleRows);
    const job = await settled(JOB.orderAction, {
      scope: { locationId: register.location.id },
      orderNumber: order.number,
      action: { kind: 'status', newState: 'COMPLETED' },
    });
    expect(await job.getState()).toBe('completed');
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: register.key })).json()).toEqual([]);
  });

  it('says so in its log', async () => {
    const job = await settled(JOB.sessionClose, { sessionId: ['log-me'] });
    await expectFailedForGood(job, /^malformed job data: \/sessionId must be string$/);
    const line = () =>
      worker
        .output()
        .split('\n')
        .find((l) => l.includes('"msg":"job failed for good"') && l.includes(`"jobId":"${job.id}"`));
    await eventually(
      () => line() !== undefined,
      'the job\u2019s log line',
      undefined,
      () => `log:\n${worker.output()}`,
    );
    expect(line()).toContain('malformed job data: /sessionId must be string');
  });
});
