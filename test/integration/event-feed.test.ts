/**
 * The event feed (docs/webhooks.md#the-event-feed), over real HTTP with a real receiver: every
 * event a change implied, recorded with its write and relayed to the event log, listed oldest
 * first, each once, as its webhook body carries it; paged with `after` and filtered; scoped to an
 * operator's locations; and an `after` the feed does not hold refused.
 */
import { AdminClient } from '@pos/shared/clients/admin-client';
import { call, sampleRows, statusUpdate } from '../support/http';
import { openDb, registerAt } from '../support/fixtures';
import { outboxesRelayed } from '../support/outboxes';
import { useStack } from '../support/stack';
import { eventually } from '../support/wait';
import { Receiver, startReceiver } from '../support/webhook-receiver';

describe('the event feed', () => {
  const stack = useStack({ WEBHOOK_ALLOW_PRIVATE: '1' });
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it("lists each change's events once, oldest first, exactly as their webhook bodies carry them", async () => {
    const { locationId, key } = await registerAt(stack, 'Feed');
    const created = await stack.admin.createWebhook({
      url: receiver.url,
      events: [
        'order.placed',
        'order.completed',
        'command.created',
        'command.acknowledged',
        'location.paused',
        'location.resumed',
      ],
      locationIds: [locationId],
    });
    receiver.secrets.push(created.secret);
    const order = await stack.admin.createOrder(locationId, sampleRows);
    expect((await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED')).status).toBe(200);
    const command = await stack.admin.createCommand(locationId, 'EXPORT_DATA');
    expect((await call('DELETE', `${stack.baseUrl}/commands/${command.number}`, { apiKey: key })).status).toBe(200);
    await stack.admin.pauseLocation(locationId, { reason: 'inventory' });
    await stack.admin.resumeLocation(locationId);
    await outboxesRelayed(stack.env);

    const feed = await stack.admin.allEvents({ locationId });
    expect(feed.map((e) => e.type)).toEqual([
      'order.placed',
      'order.completed',
      'command.created',
      'command.acknowledged',
      'location.paused',
      'location.resumed',
    ]);
    expect(new Set(feed.map((e) => e.id)).size).toBe(feed.length);
    expect(feed[1]).toMatchObject({ data: { locationId, order: { number: order.number, state: 'COMPLETED' } } });
    // each item is the webhook body of its event, byte for byte as parsed
    await eventually(() => receiver.delivered().size === feed.length, 'every event delivered');
    const bodies = new Map(
      [...receiver.delivered().values()].map((d) => [JSON.parse(d.body).id as string, JSON.parse(d.body)]),
    );
    for (const event of feed) expect(bodies.get(event.id)).toEqual(event);
  });

  it("holds an order transition's events after the order's earlier ones; the relay removes them from the order once recorded", async () => {
    const { locationId, key } = await registerAt(stack, 'Own events');
    const order = await stack.admin.createOrder(locationId, sampleRows);
    const db = await openDb(stack.env);
    try {
      const report = async () =>
        expect((await statusUpdate(stack.baseUrl, key, order.number, 'FAILED')).status).toBe(200);
      await report();
      await outboxesRelayed(stack.env);
      const first = (await db.order(locationId, order.number))!;
      expect([first.outbox, first.outboxCount, first.outboxDue]).toEqual([{}, 0, undefined]);
      const feed = (await stack.admin.allEvents({ locationId })).map((e) => e.id);
      expect(feed.length).toBeGreaterThanOrEqual(2);
      expect((await stack.admin.allEvents({ locationId }))[0]!.type).toBe('order.placed'); // its creation's, first

      await report();
      await outboxesRelayed(stack.env);
      expect((await db.order(locationId, order.number))!.outbox).toEqual({});
      const after = (await stack.admin.allEvents({ locationId })).map((e) => e.id);
      expect(after.slice(0, feed.length)).toEqual(feed); // the second report's after the first's
      expect(after.length).toBeGreaterThan(feed.length);
      expect(new Set(after).size).toBe(after.length);
    } finally {
      await db.close();
    }
  });

  it('pages with `after` (a full page names the next), filters by types, and refuses what it does not hold', async () => {
    const { locationId } = await registerAt(stack, 'Paged');
    for (let i = 0; i < 5; i++) await stack.admin.createOrder(locationId, sampleRows);
    await stack.admin.pauseLocation(locationId);
    await outboxesRelayed(stack.env);
    const first = await call('GET', `${stack.operatorOrigin}/admin/v1/events?locationId=${locationId}&limit=2`, {
      headers: { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` },
    });
    expect(first.status).toBe(200);
    const page = first.json<{ id: string }[]>();
    expect(page).toHaveLength(2);
    expect(first.headers.get('link')).toContain(`after=${page[1]!.id}`);
    const rest = await stack.admin.allEvents({ locationId, after: page[1]!.id });
    expect([...page, ...rest].map((e) => e.id)).toEqual((await stack.admin.allEvents({ locationId })).map((e) => e.id));
    expect(rest).toHaveLength(4);
    expect((await stack.admin.allEvents({ locationId, types: ['location.paused'] })).map((e) => e.type)).toEqual([
      'location.paused',
    ]);

    const bad = (query: string) =>
      call('GET', `${stack.operatorOrigin}/admin/v1/events?${query}`, {
        headers: { authorization: `Bearer ${stack.env.ADMIN_TOKEN}` },
      });
    expect((await bad('types=order.eaten')).json()).toMatchObject({ status: 400, detail: 'No event type order.eaten' });
    expect((await bad('after=evt_AAAAAAAAAAAAAAAAAAAAAAAA')).json()).toMatchObject({
      status: 400,
      title: 'Illegal argument',
    });
    expect((await bad('after=nope')).status).toBe(400);
  });

  it("shows an operator bound to locations its locations' events alone; a viewer may read it", async () => {
    const a = await registerAt(stack, 'Scoped A');
    const b = await registerAt(stack, 'Scoped B');
    await stack.admin.createOrder(a.locationId, sampleRows);
    await stack.admin.createOrder(b.locationId, sampleRows);
    await outboxesRelayed(stack.env);
    const viewer = await stack.admin.createOperator({ name: 'Viewer A', role: 'viewer', locationIds: [a.locationId] });
    const asViewer = new AdminClient(stack.operatorOrigin, viewer.token);
    const seen = await asViewer.allEvents();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((e) => e.data.locationId === a.locationId)).toBe(true);
    const refused = await call('GET', `${stack.operatorOrigin}/admin/v1/events?locationId=${b.locationId}`, {
      headers: { authorization: `Bearer ${viewer.token}` },
    });
    expect(refused.status).toBe(404);
  });
});
