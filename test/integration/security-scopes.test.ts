/**
 * What a security review found past the scoping itself, each with real roles over real HTTP: a
 * delivery belongs to its event's location, not to its subscription's locations now; a feed
 * cursor into another location's events is unknown; an attempt on another location is not that
 * location's audit record; the audit log names requests by the service's ids and webhook URLs by
 * scheme and host, and records what every write did; times are real instants; a body that is not
 * JSON is a 415; integers in query strings are decimal.
 */
import { SAMPLE_MENU } from '../../scripts/embedded/sample-menu';
import { randomUUID } from 'node:crypto';
import { AdminClient, type AuditRecord, type IssuedOperator } from '@pos/shared/clients/admin-client';
import { OPERATIONS } from '@pos/shared/openapi/operations';
import type { AuditDoc } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import { openDb } from '../support/fixtures';
import { call, CallOptions, sampleRows } from '../support/http';
import { outboxesRelayed } from '../support/outboxes';
import { startStack, useStack } from '../support/stack';
import { eventually } from '../support/wait';
import { Receiver, startReceiver } from '../support/webhook-receiver';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('scopes and records a review probed', () => {
  const stack = useStack({ WEBHOOK_ALLOW_PRIVATE: '1' });
  let receiver: Receiver;
  let locationA: string;
  let locationB: string;
  let adminA: IssuedOperator;
  let managerA: IssuedOperator;
  let viewerA: IssuedOperator;
  let managerB: IssuedOperator;

  beforeAll(async () => {
    receiver = await startReceiver();
    locationA = (await stack.admin.createLocation('Franchise A')).id;
    locationB = (await stack.admin.createLocation('Franchise B')).id;
    adminA = await stack.admin.createOperator({ name: 'Admin A', role: 'admin', locationIds: [locationA] });
    managerA = await stack.admin.createOperator({ name: 'Manager A', role: 'manager', locationIds: [locationA] });
    viewerA = await stack.admin.createOperator({ name: 'Viewer A', role: 'viewer', locationIds: [locationA] });
    managerB = await stack.admin.createOperator({ name: 'Manager B', role: 'manager', locationIds: [locationB] });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  const as = (operator: IssuedOperator | string, method: string, path: string, options: CallOptions = {}) =>
    call(method, `${stack.operatorOrigin}${path}`, {
      ...options,
      headers: { ...bearer(typeof operator === 'string' ? operator : operator.token), ...options.headers },
    });
  const root = () => stack.env.ADMIN_TOKEN!;
  const auditOf = async (requestId: string): Promise<AuditRecord | undefined> =>
    (await stack.admin.listAudit({ limit: 1000 })).find((r) => r.requestId === requestId);

  it("judges each delivery by its event's location: a subscription narrowed to A keeps B's past deliveries from A's admin", async () => {
    const subscription = await stack.admin.createWebhook({ url: receiver.url, events: ['order.placed'] });
    receiver.secrets.push(subscription.secret);
    const ofA = await stack.admin.createOrder(locationA, sampleRows);
    const ofB = await stack.admin.createOrder(locationB, sampleRows);
    await outboxesRelayed(stack.env);
    await eventually(() => receiver.delivered().size === 2, 'both orders delivered');
    await stack.admin.updateWebhook(subscription.id, { locationIds: [locationA] });

    const all = await stack.admin.listWebhookDeliveries(subscription.id, { limit: 1000 });
    const deliveryOf = (locationId: string, number: number) => {
      const sent = receiver.received.find(
        (r) => r.data.locationId === locationId && JSON.stringify(r.data).includes(`"number":${number}`),
      )!;
      return all.find((d) => d.webhookId === sent.id)!;
    };
    const deliveryA = deliveryOf(locationA, ofA.number);
    const deliveryB = deliveryOf(locationB, ofB.number);

    const listed = await as(adminA, 'GET', `/admin/v1/webhooks/${subscription.id}/deliveries?limit=1000`);
    expect(listed.status).toBe(200);
    expect(listed.json().map((d: { id: string }) => d.id)).toEqual([deliveryA.id]);
    expect(
      (await as(adminA, 'POST', `/admin/v1/webhooks/${subscription.id}/deliveries/${deliveryB.id}/redeliver`)).status,
    ).toBe(404);
    expect(
      (await as(adminA, 'POST', `/admin/v1/webhooks/${subscription.id}/deliveries/${deliveryA.id}/redeliver`)).status,
    ).toBe(202);
    // the chain-wide admin still sees both
    expect((await stack.admin.listWebhookDeliveries(subscription.id, { limit: 1000 })).map((d) => d.id)).toEqual(
      expect.arrayContaining([deliveryA.id, deliveryB.id]),
    );

    // attempts as the release before logged them (no location): judged by the event their body names
    const db = await openDb(stack.env);
    try {
      const stored = await db.db
        .collection('webhookDeliveries')
        .find({ _id: { $in: [deliveryA.id, deliveryB.id] } as never })
        .toArray();
      const legacy = stored.map(({ locationId: _, ...doc }) => ({ ...doc, _id: `${String(doc._id)}-legacy` }));
      await db.db.collection('webhookDeliveries').insertMany(legacy as never[]);
    } finally {
      await db.close();
    }
    const relisted = (await as(adminA, 'GET', `/admin/v1/webhooks/${subscription.id}/deliveries?limit=1000`))
      .json()
      .map((d: { id: string }) => d.id);
    expect(relisted).toContain(`${deliveryA.id}-legacy`);
    expect(relisted).not.toContain(`${deliveryB.id}-legacy`);
    expect(relisted).not.toContain(deliveryB.id);
  });

  it("answers a feed cursor into another location's events as an unknown one", async () => {
    await outboxesRelayed(stack.env);
    const events = await stack.admin.listEvents({ limit: 1000 });
    const ofA = events.find((e) => e.data.locationId === locationA)!;
    const ofB = events.find((e) => e.data.locationId === locationB)!;
    const unknown = await as(viewerA, 'GET', `/admin/v1/events?after=evt_${'x'.repeat(24)}`);
    const other = await as(viewerA, 'GET', `/admin/v1/events?after=${ofB.id}`);
    expect(unknown.status).toBe(400);
    expect({ status: other.status, title: other.json().title, detail: other.json().detail }).toEqual({
      status: 400,
      title: unknown.json().title,
      detail: unknown.json().detail,
    });
    expect((await as(viewerA, 'GET', `/admin/v1/events?after=${ofA.id}`)).status).toBe(200);
  });

  it("keeps an attempt on another location out of that location's audit log", async () => {
    const attempt = await as(managerB, 'POST', `/admin/v1/locations/${locationA}/orders`, {
      body: { rows: sampleRows },
    });
    expect(attempt.status).toBe(404);
    const requestId = attempt.headers.get('x-request-id')!;
    const asA = new AdminClient(stack.operatorOrigin, managerA.token);
    expect((await asA.listAudit({ limit: 1000 })).find((r) => r.requestId === requestId)).toBeUndefined();
    expect(await auditOf(requestId)).toMatchObject({ operatorId: managerB.id, status: 404 });
    expect((await auditOf(requestId))!.locationId).toBeUndefined();
  });

  it("names requests by the service's own ids: a caller's X-Request-Id is kept apart, as a claim", async () => {
    const forged = `forged-${randomUUID()}`;
    const created = await as(root(), 'POST', `/admin/v1/locations/${locationA}/commands`, {
      body: { kind: 'REQUEST_BILL', tableNumber: 3 },
      headers: { 'x-request-id': forged },
    });
    expect(created.status).toBe(201);
    const requestId = created.headers.get('x-request-id')!;
    expect(requestId).not.toBe(forged);
    expect(await auditOf(requestId)).toMatchObject({
      requestId,
      claimedRequestId: forged,
      fullHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect((await stack.admin.listAudit({ limit: 1000 })).filter((r) => r.requestId === forged)).toEqual([]);
  });

  it('shows a subscription URL to the audit by scheme and host, with a fingerprint that tells a changed path', async () => {
    const created = await as(adminA, 'POST', '/admin/v1/webhooks', {
      body: {
        url: 'http://127.0.0.1:9/hooks/s3cr3t-path-token?key=v',
        events: ['order.placed'],
        locationIds: [locationA],
      },
    });
    expect(created.status).toBe(201);
    const patched = await as(adminA, 'PATCH', `/admin/v1/webhooks/${created.json().id}`, {
      body: { url: 'http://127.0.0.1:9/hooks/other-token' },
    });
    expect(patched.status).toBe(200);
    const asManager = new AdminClient(stack.operatorOrigin, managerA.token);
    const records = await asManager.listAudit({ limit: 1000 });
    const ofCreate = records.find((r) => r.requestId === created.headers.get('x-request-id'))!;
    const ofPatch = records.find((r) => r.requestId === patched.headers.get('x-request-id'))!;
    expect(JSON.stringify([ofCreate, ofPatch])).not.toMatch(/s3cr3t|other-token|\/hooks\//);
    expect(ofCreate.change!.after).toMatchObject({
      url: 'http://127.0.0.1:9/[REDACTED]',
      urlSha256: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(ofPatch.change!.before!.urlSha256).not.toBe(ofPatch.change!.after!.urlSha256);
  });

  it('records what every successful operator write made or did', async () => {
    const { id: hook } = await stack.admin.createWebhook({
      url: receiver.url,
      events: ['order.placed'],
      locationIds: [locationA],
    });
    const order = await stack.admin.createOrder(locationA, sampleRows);
    const command = await stack.admin.createCommand(locationA, 'REQUEST_BILL', 2);
    const issued = await stack.admin.createServiceSession(locationA, 'audited');
    const customer = await stack.admin.createCustomerSession(locationA, 7, 2);
    await stack.admin.rotateKey(issued.sessionId);
    await stack.admin.closeSession(customer.sessionId);
    await stack.admin.pauseLocation(locationA, {
      reason: 'stock take',
      until: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await stack.admin.resumeLocation(locationA);
    await stack.admin.updateStatus(locationA, order.number, 'COMPLETED');
    await stack.admin.acknowledgeCommand(locationA, command.number);
    await stack.admin.rotateOperatorToken(viewerA.id);
    await stack.admin.rotateWebhookSecret(hook);
    await stack.admin.updateWebhook(hook, { events: ['order.placed', 'order.completed'] });
    await stack.admin.testWebhook(hook);
    await eventually(
      async () => (await stack.admin.listWebhookDeliveries(hook)).length > 0,
      'the test event delivered',
    );
    await stack.admin.redeliverWebhook(hook, (await stack.admin.listWebhookDeliveries(hook))[0]!.id);
    await stack.admin.deleteWebhook(hook);
    const temporary = await stack.admin.createOperator({ name: 'Temporary', role: 'viewer', locationIds: [locationA] });
    await stack.admin.updateOperator(temporary.id, { role: 'manager' });
    await stack.admin.deleteOperator(temporary.id);
    await stack.admin.updateLocation(locationA, { name: 'Franchise A, renamed' });
    const failed = await stack.admin.createOrder(locationA, sampleRows);
    await stack.admin.updateStatus(locationA, failed.number, 'FAILED');
    const threshold = (await stack.admin.getLocation(locationA)).failureThreshold;
    for (let i = 1; i < threshold; i++) await stack.admin.updateStatus(locationA, failed.number, 'FAILED');
    await stack.admin.recoverOrder(locationA, failed.number);
    await stack.admin.putMenu(locationA, SAMPLE_MENU);
    await stack.admin.setAvailability(locationA, 'sku-fries', { available: false });
    await stack.admin.publishMenu([locationA], SAMPLE_MENU);

    const records = await stack.admin.listAudit({ limit: 1000 });
    const done = records.filter((r) => r.status < 300);
    expect(done.filter((r) => r.change === undefined).map((r) => `${r.method} ${r.route}`)).toEqual([]);
    // every operator write of the table that answers 2xx here has been made at least once
    const made = new Set(done.map((r) => `${r.method} ${r.route}`));
    const writes = OPERATIONS.filter((op) => op.access === 'admin' && op.method !== 'get').map(
      (op) => `${op.method.toUpperCase()} ${op.path.replace(/\{(\w+)\}/g, ':$1')}`,
    );
    expect(writes.filter((w) => !made.has(w))).toEqual([]);
    expect(records.find((r) => r.route.endsWith('/service-sessions') && r.status === 201)!.change).toMatchObject({
      id: issued.sessionId,
      after: { type: 'SERVICE', deviceId: 'audited' },
    });
    expect(
      records.find((r) => r.method === 'PUT' && r.route.endsWith('/pause') && r.status === 200)!.change,
    ).toMatchObject({ after: { paused: true, reason: 'stock take', until: expect.any(String) } });
  });

  it('takes times that are real instants, and expiries in the future', async () => {
    const leap = await as(root(), 'PUT', `/admin/v1/locations/${locationB}/pause`, {
      body: { until: '9999-12-31T23:59:60Z' },
    });
    expect(leap.status).toBe(400);
    expect((await stack.admin.getLocation(locationB)).paused).toBe(false);
    expect(
      (await as(root(), 'PUT', `/admin/v1/locations/${locationB}/pause`, { body: { until: '2027-02-30T00:00:00Z' } }))
        .status,
    ).toBe(400);
    const expired = await as(root(), 'POST', `/admin/v1/locations/${locationB}/service-sessions`, {
      body: { deviceId: 'late', expiresAt: '1970-01-01T00:00:00Z' },
    });
    expect(expired.status).toBe(400);
    expect((await as(root(), 'GET', `/admin/v1/audit?from=2026-01-01T24:00:00Z`)).status).toBe(400);
  });

  it('refuses a body that is not JSON with a 415, and integers in query strings that are not decimal', async () => {
    const plain = await as(root(), 'POST', '/admin/v1/operators', {
      body: 'name=x&role=admin',
      headers: { 'content-type': 'text/plain' },
    });
    expect({ status: plain.status, title: plain.json().title }).toEqual({
      status: 415,
      title: 'Unsupported media type',
    });
    for (const limit of ['0x10', '1e3', '16.0', ' 16']) {
      expect(
        `${limit}: ${(await as(root(), 'GET', `/admin/v1/locations?limit=${encodeURIComponent(limit)}`)).status}`,
      ).toBe(`${limit}: 400`);
    }
    expect((await as(root(), 'GET', '/admin/v1/locations?limit=16')).status).toBe(200);
  });
});

describe("the audit chain's check catches every edit", () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let db: Awaited<ReturnType<typeof openDb>>;

  beforeEach(async () => {
    stack = await startStack({}, { worker: false });
    for (let i = 0; i < 5; i++) await stack.admin.createLocation(`Audited ${i}`);
    db = await openDb(stack.env);
    expect(await stack.admin.verifyAudit()).toMatchObject({ intact: true, checked: 5, lastSeq: 5 });
  });
  afterEach(async () => {
    await db?.close();
    await stack?.close();
  });
  const audit = () => db.db.collection<AuditDoc>('audit');

  it('names a record inserted without a place in the chain, which the list would show', async () => {
    const { _id: _, seq: _seq, prevHash: _prev, hash: _hash, ...copy } = (await audit().findOne({ seq: 3 }))!;
    await audit().insertOne({ ...copy, _id: newId(), operatorName: 'forged' });
    expect((await stack.admin.listAudit()).some((r) => r.operatorName === 'forged')).toBe(true);
    expect(await stack.admin.verifyAudit()).toMatchObject({
      intact: false,
      brokenAt: { reason: expect.stringContaining('has no place in the chain') },
    });
  });

  it('finds a record whose purgeAt was moved (retention would take it early)', async () => {
    await audit().updateOne({ seq: 2 }, { $set: { purgeAt: new Date(0) } });
    expect(await stack.admin.verifyAudit()).toMatchObject({
      intact: false,
      brokenAt: { seq: 2, reason: expect.stringContaining('does not match its fullHash') },
    });
  });

  it('finds the newest record removed, before any write after it', async () => {
    await audit().deleteOne({ seq: 5 });
    expect(await stack.admin.verifyAudit()).toMatchObject({
      intact: false,
      brokenAt: { seq: 5, reason: expect.stringContaining('is missing') },
    });
  });
});
