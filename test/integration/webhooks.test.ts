import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_QUEUE, webhookPrefix } from '@pos/shared/queue/webhook-queue';
import { call, sampleRows, statusUpdate } from '../support/http';
import { registerAt } from '../support/fixtures';
import { startStack, type StartedStack, useStack } from '../support/stack';
import { eventually, pause } from '../support/wait';
import { Receiver, startReceiver } from '../support/webhook-receiver';
import { outboxesRelayed } from '../support/outboxes';

/** Short retries, so that a test sees several attempts in a few seconds. */
const FAST_RETRIES = Array.from({ length: 30 }, () => '200ms').join(',');
const ALL_TYPES = [
  'order.placed',
  'order.completed',
  'order.aborted',
  'order.failed',
  'command.created',
  'command.acknowledged',
];

type TestStack = StartedStack;

/** Waits until the stack's webhook queue has nothing waiting, active or delayed. */
/** Every event recorded and its deliveries queued (the relay), then every delivery attempted. */
async function queueSettled(stack: TestStack): Promise<void> {
  await outboxesRelayed(stack.env);
  const connection = new Redis(stack.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue(WEBHOOK_QUEUE, {
    connection,
    prefix: webhookPrefix({ prefix: stack.env.REDIS_PREFIX!, cluster: false }),
  });
  try {
    await eventually(async () => {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    }, 'the webhook queue to settle');
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

describe('webhooks', () => {
  // The circuit is another file's subject (webhook-isolation): here every failed attempt is retried on the schedule.
  const stack = useStack({
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_RETRY_SCHEDULE: FAST_RETRIES,
    KEY_ROTATION_GRACE: '3s',
    WEBHOOK_CIRCUIT_FAILURES: '1000',
  });
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  /** A subscription to `r`, its secret handed to the receiver. */
  async function subscribe(r: Receiver, events = ALL_TYPES, locationIds?: string[]) {
    const created = await stack.admin.createWebhook({ url: r.url, events, locationIds });
    r.secrets.push(created.secret);
    return created;
  }

  it('delivers every transition of a scripted day exactly once after dedupe by webhook-id, signed, each order version in data', async () => {
    const r = await receiver();
    const { location, key } = await registerAt(stack, 'Webhook day', 2);
    const created = await subscribe(r, ALL_TYPES, [location.id]);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const other = await registerAt(stack, 'Not subscribed');

    const a = await stack.admin.createOrder(location.id, sampleRows);
    expect((await statusUpdate(stack.baseUrl, key, a.number, 'COMPLETED')).status).toBe(200);
    const b = await stack.admin.createOrder(location.id, sampleRows);
    expect((await statusUpdate(stack.baseUrl, key, b.number, 'ABORTED')).status).toBe(200);
    const c = await stack.admin.createOrder(location.id, sampleRows);
    for (let i = 0; i < 2; i++)
      expect(
        (
          await call('POST', `${stack.baseUrl}/orders/${c.number}/failure`, {
            apiKey: key,
            body: { reason: 'paper out' },
          })
        ).status,
      ).toBe(200);
    await stack.admin.recoverOrder(location.id, c.number);
    const command = await stack.admin.createCommand(location.id, 'REQUEST_BILL', 4);
    expect((await call('DELETE', `${stack.baseUrl}/commands/${command.number}`, { apiKey: key })).status).toBe(200);
    // Another location's work is not this subscription's.
    await stack.admin.createOrder(other.location.id, sampleRows);

    const expected = [
      `order.placed ${a.number}`,
      `order.completed ${a.number}`,
      `order.placed ${b.number}`,
      `order.aborted ${b.number}`,
      `order.placed ${c.number}`,
      `order.failed ${c.number}`,
      `order.placed ${c.number}`,
      `order.failed ${c.number}`,
      `order.placed ${c.number}`,
      `command.created ${command.number}`,
      `command.acknowledged ${command.number}`,
    ].sort();
    const subject = (w: { type: string; data: Record<string, unknown> }) =>
      `${w.type} ${((w.data.order ?? w.data.command) as { number: number }).number}`;
    await eventually(
      () => r.delivered().size >= expected.length,
      'every webhook of the day',
      15_000,
      () => `got ${[...r.delivered().values()].map(subject).join(', ')}`,
    );
    await queueSettled(stack);

    const delivered = [...r.delivered().values()];
    expect(delivered.map(subject).sort()).toEqual(expected);
    expect(r.received.every((w) => w.verifiedBy.length === 1)).toBe(true);
    for (const w of delivered) expect(w.data.locationId).toBe(location.id);
    // The failure reports carry their count, and each order's versions only grow.
    const failed = delivered
      .filter((w) => w.type === 'order.failed')
      .map((w) => (w.data.order as { failureCount: number }).failureCount);
    expect(failed.sort()).toEqual([1, 2]);
    const versionsOfC = delivered
      .filter((w) => w.type.startsWith('order.') && (w.data.order as { number: number }).number === c.number)
      .map((w) => (w.data.order as { version: number }).version);
    expect(new Set(versionsOfC)).toEqual(new Set([0, 1, 2, 3]));
  });

  it('a receiver that is down, then answers 500, then 200 gets every event', async () => {
    const r = await receiver();
    const { location } = await registerAt(stack, 'Webhook outage');
    const sub = await subscribe(r, ['order.placed'], [location.id]);
    await r.setMode('down');
    const orders = [
      await stack.admin.createOrder(location.id, sampleRows),
      await stack.admin.createOrder(location.id, sampleRows),
    ];
    const log = () => stack.admin.listWebhookDeliveries(sub.id, { limit: 1000 });
    await eventually(
      async () => (await log()).filter((d) => d.error).length >= 2,
      'attempts failing while the receiver is down',
    );
    await r.setMode({ status: 500 });
    await eventually(async () => (await log()).some((d) => d.statusCode === 500), 'an attempt answered 500');
    await r.setMode({ status: 200 });
    await eventually(() => r.delivered().size === 2, 'both events delivered once the receiver answers 200', 15_000);
    const numbers = [...r.delivered().values()].map((w) => (w.data.order as { number: number }).number).sort();
    expect(numbers).toEqual(orders.map((o) => o.number).sort());
    // (a batch logs its attempts once its POSTs are answered: the receiver may see them first)
    await eventually(
      async () => (await log()).filter((d) => d.outcome === 'delivered').length >= 2,
      'both deliveries logged',
    );
    const entries = await log();
    expect(entries.filter((d) => d.outcome === 'delivered')).toHaveLength(2);
    expect(entries.some((d) => d.outcome === 'retrying' && d.nextRetryAt !== undefined)).toBe(true);
    // Every attempt of one event carries the same webhook-id.
    expect(new Set(r.received.map((w) => w.id)).size).toBe(2);
    // A success ends the failing spell: the endpoint is healthy again.
    expect(await stack.admin.getWebhook(sub.id)).not.toHaveProperty('failingSince');
  });

  it('signs with both secrets during the rotation grace, then only with the new one', async () => {
    const r = await receiver();
    const sub = await subscribe(r, ['order.placed']);
    const oldSecret = sub.secret;
    const rotated = await stack.admin.rotateWebhookSecret(sub.id);
    expect(rotated.secret).not.toBe(oldSecret);
    expect(rotated.previousSecretExpiresAt).toBeDefined();
    r.secrets.push(rotated.secret);

    await stack.admin.testWebhook(sub.id);
    await eventually(() => r.received.length >= 1, 'the test event during the grace');
    const during = r.received[0]!;
    expect(during.type).toBe('webhook.test');
    expect(during.signature.split(' ')).toHaveLength(2);
    expect(during.verifiedBy.sort()).toEqual([oldSecret, rotated.secret].sort());

    // KEY_ROTATION_GRACE (3 s) runs out: the next test event is signed once.
    // the grace's end is what is tested
    await pause(Math.max(0, Date.parse(rotated.previousSecretExpiresAt!) - Date.now()) + 100);
    const before = r.received.length;
    await stack.admin.testWebhook(sub.id);
    await eventually(() => r.received.length > before, 'a test event after the grace');
    const after = r.received.at(-1)!;
    expect(after.signature.split(' ')).toHaveLength(1);
    expect(after.verifiedBy).toEqual([rotated.secret]);
    expect(() =>
      new Webhook(oldSecret).verify(after.body, {
        'webhook-id': after.id,
        'webhook-timestamp': after.timestamp,
        'webhook-signature': after.signature,
      }),
    ).toThrow();
    expect((await stack.admin.getWebhook(sub.id)).previousSecretExpiresAt).toBeUndefined();
  });

  it('a 410 Gone disables the endpoint at once, and the subscription says why', async () => {
    const r = await receiver();
    await r.setMode({ status: 410 });
    const { location } = await registerAt(stack, 'Webhook gone');
    const sub = await subscribe(r, ['order.placed'], [location.id]);
    await stack.admin.createOrder(location.id, sampleRows);
    await eventually(
      async () => (await stack.admin.getWebhook(sub.id)).disabledAt !== undefined,
      'the endpoint disabled',
    );
    const view = await stack.admin.getWebhook(sub.id);
    expect(view.disabledReason).toMatch(/410/);
    const entries = await stack.admin.listWebhookDeliveries(sub.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ outcome: 'disabled', statusCode: 410, attempt: 1 });
    // Nothing more is sent to it; re-enabled, it gets events again.
    await stack.admin.createOrder(location.id, sampleRows);
    await queueSettled(stack);
    expect(r.received).toHaveLength(1);
    await r.setMode({ status: 200 });
    expect((await stack.admin.updateWebhook(sub.id, { enabled: true })).disabledAt).toBeUndefined();
    await stack.admin.createOrder(location.id, sampleRows);
    await eventually(() => r.delivered().size === 1, 'a delivery after re-enabling');
  });

  it('logs each attempt, newest first, and redelivers one with the same webhook-id and body', async () => {
    const r = await receiver();
    const { location } = await registerAt(stack, 'Webhook log');
    const sub = await subscribe(r, ['order.placed', 'order.completed'], [location.id]);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    // one at a time, so that the log's order is theirs (deliveries are concurrent)
    await eventually(
      async () => (await stack.admin.listWebhookDeliveries(sub.id)).length === 1,
      'the first attempt logged',
    );
    await stack.admin.updateStatus(location.id, order.number, 'COMPLETED');
    await eventually(() => r.delivered().size === 2, 'both deliveries');
    await eventually(
      async () => (await stack.admin.listWebhookDeliveries(sub.id)).length === 2,
      'both attempts logged',
    );
    const entries = await stack.admin.listWebhookDeliveries(sub.id);
    expect(entries.map((d) => d.type)).toEqual(['order.completed', 'order.placed']);
    for (const entry of entries)
      expect(entry).toMatchObject({
        attempt: 1,
        outcome: 'delivered',
        statusCode: 204,
        durationMs: expect.any(Number),
        at: expect.any(String),
      });
    const paged = await stack.admin.listWebhookDeliveries(sub.id, { limit: 1, after: entries[0]!.id });
    expect(paged.map((d) => d.id)).toEqual([entries[1]!.id]);

    const placed = entries[1]!;
    const first = r.received.find((w) => w.id === placed.webhookId)!;
    const queued = await stack.admin.redeliverWebhook(sub.id, placed.id);
    expect(queued).toEqual({ webhookId: placed.webhookId, type: 'order.placed' });
    await eventually(() => r.received.filter((w) => w.id === placed.webhookId).length === 2, 'the redelivery');
    const again = r.received.filter((w) => w.id === placed.webhookId)[1]!;
    expect(again.body).toBe(first.body);
    expect(again.verifiedBy).toHaveLength(1);
    await eventually(
      async () => (await stack.admin.listWebhookDeliveries(sub.id))[0]?.redelivery === true,
      'the redelivery logged',
    );

    const missing = await call(
      'POST',
      `${stack.operatorOrigin}/admin/v1/webhooks/${sub.id}/deliveries/${sub.id}/redeliver`,
      { headers: { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` } },
    );
    expect(missing.status).toBe(404);
  });

  it('lists, changes and removes subscriptions; never shows a secret again', async () => {
    const r = await receiver();
    const sub = await subscribe(r, ['order.placed'], undefined);
    expect((await stack.admin.listWebhooks({ limit: 1000 })).map((w) => w.id)).toContain(sub.id);
    const view = await stack.admin.getWebhook(sub.id);
    expect(view).not.toHaveProperty('secret');
    const changed = await stack.admin.updateWebhook(sub.id, {
      events: ['order.completed'],
      description: 'kitchen analytics',
    });
    expect(changed).toMatchObject({ events: ['order.completed'], description: 'kitchen analytics' });
    await stack.admin.deleteWebhook(sub.id);
    const gone = await call('GET', `${stack.operatorOrigin}/admin/v1/webhooks/${sub.id}`, {
      headers: { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` },
    });
    expect(gone.status).toBe(404);
  });
});

describe('an endpoint failing for WEBHOOK_DISABLE_AFTER', () => {
  let stack: TestStack;
  let r: Receiver;

  beforeAll(async () => {
    // The circuit (5 failures in a row, then 30 s before a probe) would hold the attempts that reach
    // WEBHOOK_DISABLE_AFTER whenever five of them fit in its first second: disablement is tested here.
    stack = await startStack({
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_RETRY_SCHEDULE: FAST_RETRIES,
      WEBHOOK_DISABLE_AFTER: '1s',
      WEBHOOK_CIRCUIT_FAILURES: '1000',
    });
    r = await startReceiver();
  });
  afterAll(async () => {
    await stack.close();
    await r.close();
  });

  it('is disabled once it has failed that long without a success, and says since when', async () => {
    await r.setMode({ status: 503 });
    const { location } = await registerAt(stack, 'Webhook failing');
    const sub = await stack.admin.createWebhook({ url: r.url, events: ['order.placed'], locationIds: [location.id] });
    r.secrets.push(sub.secret);
    await stack.admin.createOrder(location.id, sampleRows);
    await eventually(
      async () => (await stack.admin.getWebhook(sub.id)).failingSince !== undefined,
      'the endpoint failing',
    );
    await eventually(
      async () => (await stack.admin.getWebhook(sub.id)).disabledAt !== undefined,
      'the endpoint disabled',
      15_000,
    );
    const view = await stack.admin.getWebhook(sub.id);
    expect(view.disabledReason).toBe(`no delivery succeeded since ${view.failingSince}`);
    const [last] = await stack.admin.listWebhookDeliveries(sub.id);
    expect(last).toMatchObject({ outcome: 'disabled', statusCode: 503 });
    expect(last!.attempt).toBeGreaterThan(1);
  });
});

describe('webhook endpoints that are not allowed (SSRF)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({}, { worker: false });
  });
  afterAll(async () => {
    await stack.close();
  });

  it.each([
    ['a loopback address', 'http://127.0.0.1:8080/hooks', /127\.0\.0\.1/],
    ['a name resolving to loopback', 'http://localhost/hooks', /loopback/],
    ['an IPv6 loopback', 'http://[::1]/hooks', /::1/],
    ['a private address', 'https://10.1.2.3/hooks', /10\.1\.2\.3/],
    ['a private 192.168 address', 'https://192.168.0.10/hooks', /192\.168/],
    ['a link-local address', 'http://169.254.10.1/hooks', /169\.254/],
    ['the cloud metadata service', 'http://169.254.169.254/latest/meta-data', /169\.254\.169\.254/],
    ['an IPv4-mapped private address', 'http://[::ffff:10.0.0.1]/hooks', /ffff/],
    ['a scheme other than http(s)', 'ftp://example.com/hooks', /http or https/],
    ['a URL with credentials', 'https://user:pass@example.com/hooks', /credentials/],
  ])('refuses %s at creation', async (_what, url, detail) => {
    const res = await call('POST', `${stack.operatorOrigin}/admin/v1/webhooks`, {
      headers: { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` },
      body: { url, events: ['order.placed'] },
    });
    expect(res.status).toBe(400);
    expect(res.json().detail).toMatch(detail);
  });

  it('refuses an unknown event type', async () => {
    const res = await call('POST', `${stack.operatorOrigin}/admin/v1/webhooks`, {
      headers: { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` },
      body: { url: 'https://example.com/hooks', events: ['order.eaten'] },
    });
    expect(res.status).toBe(400);
  });
});

describe('webhooks of presence, pause and deadlines', () => {
  const WINDOW_MS = 2_000;
  let stack: TestStack;
  let r: Receiver;

  beforeAll(async () => {
    r = await startReceiver();
    stack = await startStack({ WEBHOOK_ALLOW_PRIVATE: '1', PRESENCE_WINDOW: `${WINDOW_MS}ms`, ORDER_DEADLINE: '1s' });
  });
  afterAll(async () => {
    await stack.close();
    await r.close();
  });

  it('announces online, paused, resumed, overdue and offline once each; the overdue announcement is no second order.placed', async () => {
    const { location, key } = await registerAt(stack, 'Webhook presence');
    const types = [
      'location.online',
      'location.offline',
      'location.paused',
      'location.resumed',
      'order.placed',
      'order.overdue',
    ];
    const created = await stack.admin.createWebhook({ url: r.url, events: types, locationIds: [location.id] });
    r.secrets.push(created.secret);
    const of = (type: string) => [...r.delivered().values()].filter((w) => w.type === type);

    expect((await call('GET', `${stack.baseUrl}/orders/location?state=PLACED`, { apiKey: key })).status).toBe(200);
    await eventually(() => of('location.online').length === 1, 'location.online');
    await stack.admin.pauseLocation(location.id, { reason: 'kitchen closed' });
    await stack.admin.resumeLocation(location.id);
    const order = await stack.admin.createOrder(location.id, sampleRows);
    await eventually(() => of('order.overdue').length === 1, 'order.overdue');
    // No more polls: the window passes and the location goes dark.
    await eventually(() => of('location.offline').length === 1, 'location.offline', 4 * WINDOW_MS + 10_000);
    await queueSettled(stack);

    expect([...r.delivered().values()].map((w) => w.type).sort()).toEqual([...types].sort());
    expect(r.received.every((w) => w.verifiedBy.length === 1)).toBe(true);
    expect(of('location.paused')[0]!.data).toMatchObject({
      locationId: location.id,
      location: { id: location.id, paused: true, pauseReason: 'kitchen closed' },
    });
    expect(of('location.resumed')[0]!.data).toMatchObject({ location: { id: location.id, paused: false } });
    expect(of('location.offline')[0]!.data).toMatchObject({ location: { id: location.id, online: false } });
    expect(of('order.overdue')[0]!.data).toMatchObject({
      locationId: location.id,
      order: { number: order.number, state: 'PLACED', overdue: true },
    });
  }, 60_000);
});
