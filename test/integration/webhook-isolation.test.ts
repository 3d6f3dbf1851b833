/**
 * Each subscription's fair share of deliveries (docs/webhooks.md#fair-shares), over real HTTP with
 * real receivers: an endpoint that hangs holds WEBHOOK_ENDPOINT_CONCURRENCY slots and no more, so
 * that another's deliveries go on; an endpoint that keeps failing trips its circuit, which holds
 * its deliveries unattempted until a probe; a subscription holds at most WEBHOOK_MAX_PENDING
 * waiting deliveries (the oldest dropped into the log); test events and redeliveries are rate
 * limited; and the SSRF guard refuses IPv6 forms that carry a forbidden IPv4 address, at creation
 * and at delivery.
 */
import { MongoClient } from 'mongodb';
import { call, sampleRows } from '../support/http';
import { registerAt } from '../support/fixtures';
import { metricValue } from '../support/metrics';
import { useStack } from '../support/stack';
import { eventually, pause } from '../support/wait';
import { Receiver, startReceiver } from '../support/webhook-receiver';
import { outboxesRelayed } from '../support/outboxes';

const FAST_RETRIES = Array.from({ length: 30 }, () => '200ms').join(',');
const CIRCUIT_COOLDOWN_MS = 2_000;

describe('webhook fair shares', () => {
  const stack = useStack({
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_RETRY_SCHEDULE: FAST_RETRIES,
    WEBHOOK_ENDPOINT_CONCURRENCY: '2',
    WEBHOOK_CIRCUIT_FAILURES: '3',
    WEBHOOK_CIRCUIT_COOLDOWN: `${CIRCUIT_COOLDOWN_MS}ms`,
    WEBHOOK_MAX_PENDING: '40',
    WEBHOOK_TEST_LIMIT: '3/1m',
    // the relay, which adds the deliveries, counts those it drops on the worker's /metrics
    METRICS_PORT: '0',
  });
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };
  const subscribe = async (r: Receiver, locationId: string) => {
    const created = await stack.admin.createWebhook({
      url: r.url,
      events: ['order.placed'],
      locationIds: [locationId],
    });
    r.secrets.push(created.secret);
    return created;
  };

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  it("an endpoint that hangs with 30 deliveries waiting holds two slots; another location's subscription gets its delivery within 2 s", async () => {
    const hanging = await receiver();
    await hanging.setMode('hang');
    const slow = await registerAt(stack, 'Hanging endpoint');
    await subscribe(hanging, slow.locationId);
    for (let i = 0; i < 30; i++) await stack.admin.createOrder(slow.locationId, sampleRows);
    await eventually(() => hanging.received.length === 2, 'the hanging endpoint holding its two slots');

    const healthy = await receiver();
    const other = await registerAt(stack, 'Healthy endpoint');
    await subscribe(healthy, other.locationId);
    const sent = Date.now();
    const order = await stack.admin.createOrder(other.locationId, sampleRows);
    await eventually(() => healthy.delivered().size === 1, "the other subscription's delivery", 2_000);
    expect(Date.now() - sent).toBeLessThan(2_000);
    expect([...healthy.delivered().values()][0]!.data).toMatchObject({ order: { number: order.number } });
    // still two: the hanging endpoint's other 28 wait their turn
    expect(hanging.received).toHaveLength(2);
  });

  it('an endpoint failing 3 times in a row is not attempted until its probe; once it answers, every delivery arrives', async () => {
    const failing = await receiver();
    await failing.setMode({ status: 500 });
    const { locationId } = await registerAt(stack, 'Failing endpoint');
    const sub = await subscribe(failing, locationId);
    for (let i = 0; i < 6; i++) await stack.admin.createOrder(locationId, sampleRows);
    const attempts = async () => (await stack.admin.listWebhookDeliveries(sub.id, { limit: 1000 })).length;
    await eventually(async () => (await attempts()) >= 3, 'three failed attempts');
    // the circuit's cooldown is what is tested: retries are due every 200 ms, yet none is made.
    // The third failure may find the endpoint's second slot already attempting: one more at most.
    await pause(CIRCUIT_COOLDOWN_MS / 4);
    const held = await attempts();
    expect(held).toBeLessThanOrEqual(3 + 1);
    await pause(CIRCUIT_COOLDOWN_MS / 4);
    expect(await attempts()).toBe(held);
    expect(failing.received).toHaveLength(held);

    await failing.setMode({ status: 204 });
    await eventually(() => failing.delivered().size === 6, 'all six delivered after the probe', 15_000);
    const log = await stack.admin.listWebhookDeliveries(sub.id, { limit: 1000 });
    expect(log.filter((d) => d.outcome === 'delivered')).toHaveLength(6);
  });

  it('a subscription holds at most WEBHOOK_MAX_PENDING waiting deliveries: the oldest are dropped into the log, redeliverable, and counted', async () => {
    // An endpoint that hangs: its two slots stay taken and the rest wait unattempted, however slowly
    // the orders come (one that refuses at once failed the first deliveries for good, on the fast
    // retry schedule, before the last were added on a loaded machine).
    const stuck = await receiver();
    await stuck.setMode('hang');
    const { locationId } = await registerAt(stack, 'Endpoint stuck');
    const sub = await subscribe(stuck, locationId);
    const workerMetrics = `http://127.0.0.1:${stack.worker!.metricsPort}`;
    const droppedBefore = await metricValue(workerMetrics, 'pos_webhook_deliveries_dropped_total');
    const orders = [];
    for (let i = 0; i < 46; i++) orders.push(await stack.admin.createOrder(locationId, sampleRows));
    await outboxesRelayed(stack.env);
    expect(await stack.api.deps.deliveries.pending(sub.id)).toBeLessThanOrEqual(40);

    const dropped = (await stack.admin.listWebhookDeliveries(sub.id, { limit: 1000 })).filter(
      (d) => d.outcome === 'dropped',
    );
    expect(dropped.length).toBeGreaterThanOrEqual(1);
    expect(await metricValue(workerMetrics, 'pos_webhook_deliveries_dropped_total')).toBe(
      droppedBefore + dropped.length,
    );
    // among the oldest: the first orders' deliveries (those being attempted or passing through an
    // attempt at that moment are skipped for the next oldest), each with the body it would have sent
    const firstNumbers = new Set(orders.slice(0, 20).map((o) => o.number));
    for (const entry of dropped) {
      expect(entry.error).toMatch(/WEBHOOK_MAX_PENDING/);
      const stored = await stack.api.deps.repos.webhookDeliveries.find(sub.id, entry.id);
      expect(
        firstNumbers.has((JSON.parse(stored!.body) as { data: { order: { number: number } } }).data.order.number),
      ).toBe(true);
    }

    // redeliverable from the log
    expect((await stack.admin.redeliverWebhook(sub.id, dropped[0]!.id)).webhookId).toBe(dropped[0]!.webhookId);
  });

  it('rate-limits test events and redeliveries per subscription (WEBHOOK_TEST_LIMIT) with Retry-After', async () => {
    const r = await receiver();
    const { locationId } = await registerAt(stack, 'Tested endpoint');
    const sub = await subscribe(r, locationId);
    const test = () =>
      call('POST', `${stack.operatorOrigin}/admin/v1/webhooks/${sub.id}/test`, {
        headers: { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` },
      });
    for (let i = 0; i < 3; i++) expect((await test()).status).toBe(202);
    const refused = await test();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.json()).toMatchObject({
      title: 'Too many requests',
      detail: expect.stringMatching(/test events and redeliveries to this subscription/),
    });
    // another subscription's quota is its own
    const other = await subscribe(await receiver(), locationId);
    expect((await stack.admin.testWebhook(other.id)).type).toBe('webhook.test');
  });
});

describe('the SSRF guard on IPv6 forms that carry an IPv4 address', () => {
  const stack = useStack({ WEBHOOK_RETRY_SCHEDULE: '1h' });

  it.each([
    'http://[64:ff9b::a9fe:a9fe]/hook',
    'http://[2002:a9fe:a9fe::]/hook',
    'http://[::127.0.0.1]/hook',
    'http://[::ffff:0:7f00:1]/hook',
    'http://[64:ff9b:1::a00:1]/hook',
  ])('refuses %s at creation', async (url) => {
    const res = await call('POST', `${stack.origin}/admin/v1/webhooks`, {
      headers: { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` },
      body: { url, events: ['order.placed'] },
    });
    expect(res.status).toBe(400);
    // (those that carry 169.254.169.254 are a cloud's metadata address,
    // refused whatever WEBHOOK_ALLOW_PRIVATE says)
    expect(res.json().detail).toMatch(
      /loopback, private, link-local or metadata address|a cloud metadata or platform address/,
    );
  });

  it("refuses at delivery an address that became one (changed behind the API's back)", async () => {
    const r = await startReceiver();
    try {
      const sub = await stack.admin.createWebhook({ url: 'http://93.184.215.14/hook', events: ['order.placed'] });
      const client = await new MongoClient(stack.env.MONGO_URL!).connect();
      try {
        const port = new URL(r.url).port;
        await client
          .db(stack.env.MONGO_DB)
          .collection('webhooks')
          .updateOne({ _id: sub.id as never }, { $set: { url: `http://[64:ff9b::7f00:1]:${port}/hooks` } });
      } finally {
        await client.close();
      }
      await stack.admin.testWebhook(sub.id);
      await eventually(async () => (await stack.admin.listWebhookDeliveries(sub.id)).length > 0, 'the attempt logged');
      const [attempt] = await stack.admin.listWebhookDeliveries(sub.id);
      expect(attempt!.error).toMatch(
        /resolves to 64:ff9b::7f00:1, a loopback, private, link-local or metadata address/,
      );
      expect(r.received).toHaveLength(0);
    } finally {
      await r.close();
    }
  });
});

describe('the SSRF guard with WEBHOOK_ALLOW_PRIVATE=1', () => {
  const stack = useStack({ WEBHOOK_ALLOW_PRIVATE: '1' }, { worker: false });

  const create = (url: string) =>
    call('POST', `${stack.origin}/admin/v1/webhooks`, {
      headers: { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` },
      body: { url, events: ['order.placed'] },
    });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://2852039166/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[fd00:ec2::254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://168.63.129.16/',
    'http://100.100.100.200/',
  ])('still refuses the cloud metadata or platform address %s', async (url) => {
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(res.json().detail).toMatch(/a cloud metadata or platform address: no receiver lives there/);
  });

  it('takes a receiver on loopback or a private network', async () => {
    for (const url of ['http://127.0.0.1:9/hook', 'http://[fd12::1]:9/hook'])
      expect((await create(url)).status).toBe(201);
  });
});
