/**
 * Least privilege between locations (docs/operators.md#bound-operators), with real roles over real
 * HTTP: an admin bound to location A acts only within A (it grants no more than it holds, never
 * changes its own role or locations, reaches no operator or subscription beyond A, and is refused
 * every chain-wide surface), while the same operations stay open to it within A. The audit log
 * records what each write changed, and its hash chain names a record changed in MongoDB.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { AdminClient, type AuditRecord, type IssuedOperator } from '@pos/shared/clients/admin-client';
import { OPERATIONS } from '@pos/shared/openapi/operations';
import { call, CallOptions } from '../support/http';
import { runToEnd } from '../support/process-groups';
import { ROOT, useStack } from '../support/stack';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('an admin bound to one location', () => {
  const stack = useStack({ WEBHOOK_ALLOW_PRIVATE: '1' }, { worker: false });
  let locationA: string;
  let locationB: string;
  let boundAdmin: IssuedOperator;
  let unboundAdmin: IssuedOperator;
  let managerB: IssuedOperator;
  let asBound: AdminClient;

  beforeAll(async () => {
    locationA = (await stack.admin.createLocation('Franchise A')).id;
    locationB = (await stack.admin.createLocation('Franchise B')).id;
    boundAdmin = await stack.admin.createOperator({ name: 'Franchisee A', role: 'admin', locationIds: [locationA] });
    unboundAdmin = await stack.admin.createOperator({ name: 'HQ', role: 'admin' });
    managerB = await stack.admin.createOperator({ name: 'Manager B', role: 'manager', locationIds: [locationB] });
    asBound = new AdminClient(stack.operatorOrigin, boundAdmin.token);
  });

  const as = (token: string, method: string, path: string, options: CallOptions = {}) =>
    call(method, `${stack.origin}${path}`, { ...options, headers: { ...bearer(token), ...options.headers } });
  const bound = (method: string, path: string, body?: unknown) =>
    as(boundAdmin.token, method, path, body === undefined ? {} : { body });
  /** The audit record of the last write with this request id. */
  const auditOf = async (requestId: string): Promise<AuditRecord> =>
    (await stack.admin.listAudit({ limit: 1000 })).find((r) => r.requestId === requestId)!;

  it('cannot make itself an admin of more locations, nor change its own role', async () => {
    for (const body of [{ allLocations: true }, { locationIds: [locationA, locationB] }, { role: 'viewer' }]) {
      const res = await bound('PATCH', `/admin/v1/operators/${boundAdmin.id}`, body);
      expect(`${JSON.stringify(body)} ${res.status}`).toBe(`${JSON.stringify(body)} 403`);
      expect(res.json().title).toBe('Forbidden');
    }
    // B stays out of reach
    expect((await bound('GET', `/admin/v1/locations/${locationB}`)).status).toBe(404);
    expect(await stack.admin.getOperator(boundAdmin.id)).toMatchObject({ role: 'admin', locationIds: [locationA] });
  });

  it('grants only within what it holds: no unbound operator, none for B; a manager for A is fine', async () => {
    const refused = [
      { name: 'Escalated', role: 'admin' },
      { name: 'For B', role: 'manager', locationIds: [locationB] },
      { name: 'A and B', role: 'viewer', locationIds: [locationA, locationB] },
    ];
    for (const body of refused) {
      const res = await bound('POST', '/admin/v1/operators', body);
      expect(`${body.name} ${res.status}`).toBe(`${body.name} 403`);
    }
    const created = await bound('POST', '/admin/v1/operators', {
      name: 'Manager A',
      role: 'manager',
      locationIds: [locationA],
    });
    expect(created.status).toBe(201);
    expect(created.json()).toMatchObject({ role: 'manager', locationIds: [locationA], token: expect.any(String) });
    // it may change that operator within A, and not beyond
    const id = created.json().id as string;
    expect((await bound('PATCH', `/admin/v1/operators/${id}`, { role: 'viewer' })).status).toBe(200);
    expect((await bound('PATCH', `/admin/v1/operators/${id}`, { locationIds: [locationB] })).status).toBe(403);
    expect((await bound('PATCH', `/admin/v1/operators/${id}`, { allLocations: true })).status).toBe(403);
  });

  it("sees, rotates and deletes only operators within its locations: an unbound admin's and B's are missing to it", async () => {
    for (const target of [unboundAdmin, managerB]) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['PATCH', ''],
        ['POST', '/rotate-token'],
        ['DELETE', ''],
      ] as const) {
        const res = await bound(
          method,
          `/admin/v1/operators/${target.id}${suffix}`,
          method === 'PATCH' ? { name: 'Renamed' } : undefined,
        );
        expect(`${method} ${target.name}${suffix} ${res.status}`).toBe(`${method} ${target.name}${suffix} 404`);
        expect(res.json().detail).toBe('Operator does not exist');
      }
    }
    expect(await stack.admin.getOperator(unboundAdmin.id)).toMatchObject({ name: 'HQ', role: 'admin' });
    const listed = (await asBound.listOperators({ limit: 1000 })).map((o) => o.id);
    expect(listed).toContain(boundAdmin.id);
    expect(listed).not.toContain(unboundAdmin.id);
    expect(listed).not.toContain(managerB.id);
  });

  it('is refused every chain-wide surface: new locations, Bull Board, /metrics, the audit chain check', async () => {
    const chainWide = OPERATIONS.filter((op) => op.bound === 'chain').map(
      (op) => `${op.method.toUpperCase()} ${op.path}`,
    );
    expect(chainWide.sort()).toEqual([
      'GET /admin/queues',
      'GET /admin/v1/audit/verify',
      'GET /metrics',
      'POST /admin/v1/locations',
    ]);
    for (const [method, path] of [
      ['POST', '/admin/v1/locations'],
      ['GET', '/admin/queues'],
      ['GET', '/admin/queues/api/queues'],
      ['GET', '/metrics'],
      ['GET', '/admin/v1/audit/verify'],
    ] as const) {
      const res = await bound(method, path, method === 'POST' ? { name: 'Sneaky' } : undefined);
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 403`);
      expect(res.json().detail).toBe('This is chain-wide: it needs an operator not bound to locations');
    }
    // an unbound admin operator may
    expect((await as(unboundAdmin.token, 'GET', '/metrics')).status).toBe(200);
    // the audit log it reads is its location's
    const records = await asBound.listAudit({ limit: 1000 });
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.locationId === locationA)).toBe(true);
  });

  it("subscribes webhooks for its own location only, and cannot reach B's subscriptions", async () => {
    const url = 'http://127.0.0.1:9/hooks';
    expect((await bound('POST', '/admin/v1/webhooks', { url, events: ['order.placed'] })).status).toBe(403);
    expect(
      (await bound('POST', '/admin/v1/webhooks', { url, events: ['order.placed'], locationIds: [locationB] })).status,
    ).toBe(403);
    const own = await bound('POST', '/admin/v1/webhooks', { url, events: ['order.placed'], locationIds: [locationA] });
    expect(own.status).toBe(201);
    const ownId = own.json().id as string;
    expect((await bound('PATCH', `/admin/v1/webhooks/${ownId}`, { locationIds: [locationA, locationB] })).status).toBe(
      403,
    );
    expect((await bound('PATCH', `/admin/v1/webhooks/${ownId}`, { locationIds: [] })).status).toBe(403);
    expect(
      (await bound('PATCH', `/admin/v1/webhooks/${ownId}`, { events: ['order.placed', 'order.completed'] })).status,
    ).toBe(200);

    const ofB = await stack.admin.createWebhook({ url, events: ['order.placed'], locationIds: [locationB] });
    const chainWide = await stack.admin.createWebhook({ url, events: ['order.placed'] });
    for (const sub of [ofB, chainWide]) {
      for (const [method, suffix, body] of [
        ['GET', '', undefined],
        ['PATCH', '', { url: 'http://127.0.0.1:10/mine' }],
        ['GET', '/deliveries', undefined],
        ['POST', '/test', undefined],
        ['POST', '/rotate-secret', undefined],
        ['DELETE', '', undefined],
      ] as const) {
        const res = await bound(method, `/admin/v1/webhooks/${sub.id}${suffix}`, body);
        expect(`${method} ${suffix} ${res.status}`).toBe(`${method} ${suffix} 404`);
      }
      expect((await stack.admin.getWebhook(sub.id)).url).toBe(url);
    }
    expect((await asBound.listWebhooks({ limit: 1000 })).map((w) => w.id)).toEqual([ownId]);
  });

  it("records what a write changed: an operator's id, role and locations; before and after of a change; a subscription's url, events and locations", async () => {
    const requestId = randomUUID();
    const created = await bound('POST', '/admin/v1/operators', {
      name: 'Viewer A',
      role: 'viewer',
      locationIds: [locationA],
    });
    const createdRequest = created.headers.get('x-request-id')!;
    const creation = await auditOf(createdRequest);
    expect(creation).toMatchObject({
      operatorId: boundAdmin.id,
      route: '/admin/v1/operators',
      status: 201,
      locationId: locationA,
      change: { id: created.json().id, after: { name: 'Viewer A', role: 'viewer', locationIds: [locationA] } },
    });
    expect(JSON.stringify(creation)).not.toContain(created.json().token);

    const patched = await as(boundAdmin.token, 'PATCH', `/admin/v1/operators/${created.json().id}`, {
      body: { role: 'manager' },
      headers: { 'x-request-id': requestId },
    });
    expect(patched.status).toBe(200);
    expect(await auditOf(patched.headers.get('x-request-id')!)).toMatchObject({
      claimedRequestId: requestId,
      change: { before: { role: 'viewer' }, after: { role: 'manager' } },
    });

    const escalation = await bound('PATCH', `/admin/v1/operators/${boundAdmin.id}`, { allLocations: true });
    expect(await auditOf(escalation.headers.get('x-request-id')!)).toMatchObject({
      status: 403,
      operatorId: boundAdmin.id,
    });

    const widened = await stack.admin.createWebhook({
      url: 'http://127.0.0.1:9/pos?token=s3cret',
      events: ['order.placed'],
      locationIds: [locationA],
    });
    const widening = await call('PATCH', `${stack.origin}/admin/v1/webhooks/${widened.id}`, {
      headers: bearer(stack.env.ADMIN_TOKEN!),
      body: { locationIds: [], url: 'http://127.0.0.1:9/other?token=n3w' },
    });
    const change = (await auditOf(widening.headers.get('x-request-id')!)).change!;
    // the URL's scheme and host did not change: its fingerprint did
    expect(change).toEqual({
      before: { urlSha256: expect.stringMatching(/^[0-9a-f]{16}$/), locationIds: [locationA] },
      after: { urlSha256: expect.stringMatching(/^[0-9a-f]{16}$/), allLocations: true },
    });
    expect(JSON.stringify(change)).not.toMatch(/s3cret|n3w/);
  });

  it('shows a bound reader only the location ids of its own locations in a change, and how many others there were', async () => {
    const asManagerB = new AdminClient(stack.operatorOrigin, managerB.token);
    const moved = await stack.admin.createOperator({
      name: 'Moving manager',
      role: 'manager',
      locationIds: [locationA],
    });
    const moves: string[] = [];
    for (const locationIds of [[locationA, locationB], [locationB]]) {
      const res = await call('PATCH', `${stack.origin}/admin/v1/operators/${moved.id}`, {
        headers: bearer(stack.env.ADMIN_TOKEN!),
        body: { locationIds },
      });
      moves.push(res.headers.get('x-request-id')!);
    }
    const hook = await stack.admin.createWebhook({
      url: 'http://127.0.0.1:9/hook',
      events: ['order.placed'],
      locationIds: [locationA, locationB],
    });
    const hookRes = await call('PATCH', `${stack.origin}/admin/v1/webhooks/${hook.id}`, {
      headers: bearer(stack.env.ADMIN_TOKEN!),
      body: { locationIds: [locationB] },
    });
    const hookPatch = hookRes.headers.get('x-request-id')!;

    const readBy = async (client: AdminClient) =>
      new Map((await client.listAudit({ limit: 1000 })).map((record) => [record.requestId, record]));
    const [byA, byB, byRoot] = await Promise.all([readBy(asBound), readBy(asManagerB), readBy(stack.admin)]);
    // chain-wide readers see every id
    expect(byRoot.get(moves[0]!)!.change).toEqual({
      before: { locationIds: [locationA] },
      after: { locationIds: [locationA, locationB] },
    });
    for (const [reader, own, other] of [
      [byA, locationA, locationB],
      [byB, locationB, locationA],
    ] as const) {
      const seen = [...reader.values()].filter((record) => [...moves, hookPatch].includes(record.requestId));
      expect(seen.length).toBeGreaterThan(0);
      expect(JSON.stringify(seen)).not.toContain(other);
      for (const record of seen) expect(JSON.stringify(record.change)).toContain(own);
    }
    expect(byA.get(moves[0]!)?.change).toEqual({
      before: { locationIds: [locationA] },
      after: { locationIds: [locationA], otherLocations: 1 },
    });
    expect(byB.get(moves[1]!)?.change).toEqual({
      before: { locationIds: [locationB], otherLocations: 1 },
      after: { locationIds: [locationB] },
    });
    expect(byB.get(hookPatch)?.change).toMatchObject({
      before: { locationIds: [locationB], otherLocations: 1 },
      after: { locationIds: [locationB] },
    });
  });

  it('keeps a hash chain that `audit verify` checks, naming a record changed in MongoDB', async () => {
    const verifyCli = async (): Promise<{ code: number | null; out: string }> => {
      const { ADMIN_TOKEN: _root, POS_ADMIN_TOKEN: _operator, ...env } = process.env;
      return runToEnd(
        process.execPath,
        ['--require', 'tsx/cjs', path.join(ROOT, 'scripts', 'admin.ts'), 'audit', 'verify'],
        {
          cwd: ROOT,
          env: { ...env, POS_URL: stack.operatorOrigin, ADMIN_TOKEN: stack.env.ADMIN_TOKEN! },
        },
      );
    };
    const before = await stack.admin.verifyAuditChain();
    expect(before).toMatchObject({ intact: true, complete: true, firstSeq: 1 });
    expect(before.checked).toBeGreaterThan(20);
    // stretch by stretch, as a long log is checked
    expect(await stack.admin.verifyAudit({ limit: 5 })).toMatchObject({
      intact: true,
      checked: 5,
      firstSeq: 1,
      lastSeq: 5,
      complete: false,
    });
    expect(await stack.admin.verifyAudit({ after: 5, limit: 5 })).toMatchObject({
      intact: true,
      checked: 5,
      firstSeq: 6,
      lastSeq: 10,
    });
    const cli = await verifyCli();
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.out)).toMatchObject({ intact: true, checked: before.checked });

    // someone with database access turns a refusal into a success
    const client = await new MongoClient(stack.env.MONGO_URL!).connect();
    try {
      const audit = client.db(stack.env.MONGO_DB).collection<{ _id: string; seq: number; status: number }>('audit');
      const target = (await audit.find({ status: 403 }).sort({ seq: 1 }).limit(1).toArray())[0]!;
      await audit.updateOne({ _id: target._id }, { $set: { status: 200 } });
      const broken = await stack.admin.verifyAuditChain();
      expect(broken).toMatchObject({
        intact: false,
        brokenAt: { seq: target.seq, id: target._id, reason: expect.stringMatching(/does not match its hash/) },
      });
      const tampered = await verifyCli();
      expect(tampered.code).toBe(1);
      expect(JSON.parse(tampered.out).brokenAt).toMatchObject({ seq: target.seq, id: target._id });

      // a record removed from the middle is a missing link
      await audit.updateOne({ _id: target._id }, { $set: { status: 403 } });
      const removed = (
        await audit
          .find({ seq: { $gt: target.seq } })
          .sort({ seq: 1 })
          .limit(1)
          .toArray()
      )[0]!;
      await audit.deleteOne({ _id: removed._id });
      expect(await stack.admin.verifyAuditChain()).toMatchObject({
        intact: false,
        brokenAt: { seq: removed.seq, reason: expect.stringMatching(/is missing/) },
      });
    } finally {
      await client.close();
    }
  });
});
