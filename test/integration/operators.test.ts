/**
 * Operator accounts, roles and the audit log (docs/operators.md), over real HTTP: each role is
 * refused what is above it (403) on every operation of the OpenAPI table, a token scoped to a
 * location sees nothing of another (the same 404 as a missing record, lists filtered), a deleted
 * or rotated token stops on both API nodes at once (and on a node that missed the change while cut
 * off from Redis, once it is back), Bull Board and /metrics are an admin's, and every write,
 * refused or not, leaves exactly one audit record with no secret in it.
 */
import { randomUUID } from 'node:crypto';
import { AdminClient, type AuditRecord, type IssuedOperator } from '@pos/shared/clients/admin-client';
import { OPERATIONS } from '@pos/shared/openapi/operations';
import { rolesFrom } from '@pos/shared/auth/roles';
import { openDb } from '../support/fixtures';
import { call, CallOptions, HttpResult, sampleRows } from '../support/http';
import { mongoCommandsFor } from '../support/metrics';
import { logged, roleOrigin, stopRoles } from '../support/roles';
import { TestStream } from '../support/sse-client';
import { ChildRole, spawnRole, stackEnv, useStack, StackEnv } from '../support/stack';
import { TcpProxy } from '../../scripts/embedded/tcp-proxy';
import { eventually } from '../support/wait';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const basic = (password: string) => ({
  authorization: `Basic ${Buffer.from(`someone:${password}`).toString('base64')}`,
});

describe('operators: roles, scope and audit', () => {
  const stack = useStack({ BULL_BOARD_WRITABLE: '1' });
  /** Every secret this file saw: none may appear in an audit record. */
  const secrets: string[] = [];
  let locationA: string;
  let locationB: string;
  let managerA: IssuedOperator;
  let viewer: IssuedOperator;
  let adminOperator: IssuedOperator;

  beforeAll(async () => {
    secrets.push(stack.env.ADMIN_TOKEN!, stack.env.API_KEY_SECRET!);
    locationA = (await stack.admin.createLocation('Store A')).id;
    locationB = (await stack.admin.createLocation('Store B')).id;
    managerA = await stack.admin.createOperator({ name: 'Manager of A', role: 'manager', locationIds: [locationA] });
    viewer = await stack.admin.createOperator({ name: 'Viewer', role: 'viewer' });
    adminOperator = await stack.admin.createOperator({ name: 'HQ ops', role: 'admin' });
    secrets.push(managerA.token, viewer.token, adminOperator.token);
  });

  /** The audit records of one request, as root reads them. */
  async function auditOf(requestId: string): Promise<AuditRecord[]> {
    return (await stack.admin.listAudit({ limit: 1000 })).filter((record) => record.requestId === requestId);
  }

  /**
   * A write with a request id of the caller's; its one audit record, by
   * the service's id, checked against who made it.
   */
  async function write(
    token: string,
    method: string,
    path: string,
    options: CallOptions = {},
  ): Promise<{ res: HttpResult; record: AuditRecord }> {
    const claimed = randomUUID();
    const res = await call(method, `${stack.origin}${path}`, {
      ...options,
      headers: { ...bearer(token), 'x-request-id': claimed, ...options.headers },
    });
    const requestId = res.headers.get('x-request-id')!;
    const records = await auditOf(requestId);
    expect(records).toHaveLength(1);
    const record = records[0]!;
    expect(record).toMatchObject({ method, status: res.status, requestId, claimedRequestId: claimed });
    const text = JSON.stringify(record);
    for (const secret of secrets) expect(text).not.toContain(secret);
    return { res, record };
  }

  const get = (token: string, path: string) => call('GET', `${stack.origin}${path}`, { headers: bearer(token) });

  it('ADMIN_TOKEN is root: its writes are audited as `root`, an admin without an operator id', async () => {
    const { res, record } = await write(stack.env.ADMIN_TOKEN!, 'POST', '/admin/v1/locations', {
      body: { name: 'Root made this' },
    });
    expect(res.status).toBe(201);
    expect(record).toMatchObject({
      operatorName: 'root',
      role: 'admin',
      route: '/admin/v1/locations',
      targets: {},
      status: 201,
    });
    expect(record.operatorId).toBeUndefined();
    // kept AUDIT_RETENTION (400 days by default): the lifecycle purge reads purgeAt, oldest first; no TTL
    // index, which would take records out of the middle of the hash chain
    const { db, close } = await openDb(stack.env);
    try {
      const stored = await db.collection<{ at: Date; purgeAt: Date }>('audit').findOne({ requestId: record.requestId });
      expect(stored!.purgeAt.getTime() - stored!.at.getTime()).toBe(400 * 86_400_000);
      expect(
        (await db.collection('audit').indexes()).filter((index) => index.expireAfterSeconds !== undefined),
      ).toEqual([]);
    } finally {
      await close();
    }
  });

  it('a manager of location A cannot see or touch location B', async () => {
    const token = managerA.token;
    // lists show only what the token may see
    expect((await get(token, '/admin/v1/locations')).json().map((l: { id: string }) => l.id)).toEqual([locationA]);
    expect((await get(token, `/admin/v1/locations/${locationA}`)).status).toBe(200);

    // B answers as a missing location does, read or write
    const missing = (await get(token, `/admin/v1/locations/${randomUUID()}`)).json();
    for (const path of [
      `/locations/${locationB}`,
      `/locations/${locationB}/orders?state=PLACED`,
      `/locations/${locationB}/sessions`,
      `/locations/${locationB}/commands`,
      `/locations/${locationB}/history`,
    ]) {
      const res = await get(token, `/admin/v1${path}`);
      expect(`${path} ${res.status}`).toBe(`${path} 404`);
      expect(res.json().detail).toBe(missing.detail);
    }
    const refused = await write(token, 'POST', `/admin/v1/locations/${locationB}/orders`, {
      body: { rows: sampleRows },
    });
    expect(refused.res.status).toBe(404);
    expect(refused.res.json().detail).toBe(missing.detail);
    // not B's record: B's operators would read who tried (docs/operators.md#the-audit-log)
    expect(refused.record).toMatchObject({
      operatorId: managerA.id,
      operatorName: 'Manager of A',
      role: 'manager',
      status: 404,
    });
    expect(refused.record.locationId).toBeUndefined();
    expect(await stack.admin.listOrders(locationB, 'PLACED')).toEqual([]);

    // B's sessions: neither rotated nor closed, and answered as missing sessions
    const sessionB = await stack.admin.createServiceSession(locationB, 'register-b');
    secrets.push(sessionB.apiKey);
    for (const [method, path] of [
      ['POST', `/admin/v1/sessions/${sessionB.sessionId}/rotate-key`],
      ['DELETE', `/admin/v1/sessions/${sessionB.sessionId}`],
    ] as const) {
      const { res, record } = await write(token, method, path);
      expect(res.status).toBe(404);
      expect(res.json().detail).toBe('Session does not exist');
      expect(record).toMatchObject({ targets: { sessionId: sessionB.sessionId } });
      expect(record.locationId).toBeUndefined();
    }
    expect(
      (await stack.admin.listSessions(locationB)).find((s) => s.sessionId === sessionB.sessionId)?.closedAt,
    ).toBeUndefined();

    // A is its own: an order, a register key (never in the audit record), a status update
    const created = await write(token, 'POST', `/admin/v1/locations/${locationA}/orders`, {
      body: { rows: sampleRows },
    });
    expect(created.res.status).toBe(201);
    expect(created.record).toMatchObject({
      route: '/admin/v1/locations/:id/orders',
      targets: { id: locationA },
      locationId: locationA,
      status: 201,
    });
    const issued = await write(token, 'POST', `/admin/v1/locations/${locationA}/service-sessions`, {
      body: { deviceId: 'register-a' },
    });
    expect(issued.res.status).toBe(201);
    secrets.push(issued.res.json().apiKey);
    expect(JSON.stringify(issued.record)).not.toContain(issued.res.json().apiKey);
    const rotated = await write(token, 'POST', `/admin/v1/sessions/${issued.res.json().sessionId}/rotate-key`);
    expect(rotated.res.status).toBe(200);
    secrets.push(rotated.res.json().apiKey);
    expect(JSON.stringify(rotated.record)).not.toContain(rotated.res.json().apiKey);
    expect(rotated.record).toMatchObject({ locationId: locationA });

    // its audit log is A's: B's records (its own refused attempts included) are not in it
    const log = (await get(token, '/admin/v1/audit?limit=1000')).json() as AuditRecord[];
    expect(log.length).toBeGreaterThanOrEqual(3);
    expect(log.every((record) => record.locationId === locationA)).toBe(true);
    expect(log.map((r) => r.requestId)).toContain(created.record.requestId);
    expect((await get(token, `/admin/v1/audit?locationId=${locationB}`)).json()).toEqual([]);
    // newest first
    expect(log.map((r) => r.at)).toEqual([...log.map((r) => r.at)].sort().reverse());
  });

  it('a viewer reads, and cannot act: every write is a 403 Forbidden, and is audited', async () => {
    const token = viewer.token;
    expect((await get(token, `/admin/v1/locations/${locationA}/orders?state=PLACED`)).status).toBe(200);
    const sessions = await get(token, `/admin/v1/locations/${locationA}/sessions`);
    expect(sessions.status).toBe(200);
    // never a key
    expect(sessions.json().every((s: object) => !('apiKey' in s))).toBe(true);
    const order = await stack.admin.createOrder(locationA, sampleRows);
    for (const [method, path, body] of [
      ['PUT', `/admin/v1/locations/${locationA}/orders/${order.number}/statusupdate`, { newState: 'ABORTED' }],
      ['POST', `/admin/v1/locations/${locationA}/orders`, { rows: sampleRows }],
      ['POST', `/admin/v1/locations/${locationA}/service-sessions`, { deviceId: 'viewer-made' }],
    ] as const) {
      const { res, record } = await write(token, method, path, { body });
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 403`);
      expect(res.json().title).toBe('Forbidden');
      expect(record).toMatchObject({ operatorId: viewer.id, role: 'viewer', status: 403, locationId: locationA });
    }
    expect((await stack.admin.listOrders(locationA, 'PLACED')).find((o) => o.number === order.number)).toBeDefined();
    expect((await get(token, '/admin/v1/audit')).status).toBe(403);
  });

  it("an audit record costs two MongoDB commands, its insert and the head anchor's update (the chain's last link is known); a cached token none", async () => {
    const refusedWrite = () =>
      call('POST', `${stack.origin}/admin/v1/locations/${locationA}/orders`, {
        headers: bearer(viewer.token),
        body: { rows: sampleRows },
      });
    await refusedWrite();
    // the token is cached and the write refused before its work: what is left is its audit record
    expect(await mongoCommandsFor(stack.origin, refusedWrite)).toBe(2);
    // a read is not audited: its own read of the location only
    expect(await mongoCommandsFor(stack.origin, () => get(viewer.token, `/admin/v1/locations/${locationA}`))).toBe(1);
  });

  it('each role gets a 403 on every operation above it, and never on one within it', async () => {
    const tokens = {
      viewer: viewer.token,
      manager: (await stack.admin.createOperator({ name: 'Manager, all', role: 'manager' })).token,
    };
    secrets.push(tokens.manager);
    const fill = (path: string) =>
      path
        .replace('{id}', randomUUID())
        .replace('{sessionId}', randomUUID())
        .replace('{operatorId}', randomUUID())
        .replace('{number}', '1');
    const checked: string[] = [];
    for (const spec of OPERATIONS.filter((op) => op.access === 'admin' || op.access === 'board')) {
      for (const [role, token] of Object.entries(tokens) as [keyof typeof tokens, string][]) {
        const method = spec.method.toUpperCase();
        const path = fill(spec.path) + (spec.id === 'listOrders' ? '?state=PLACED' : '');
        const allowed = rolesFrom(spec.role!).includes(role);
        const res = method === 'GET' ? await get(token, path) : (await write(token, method, path, { body: {} })).res;
        const line = `${role} ${method} ${spec.path}`;
        if (allowed) expect(`${line} ${res.status}`).not.toMatch(/ (401|403)$/);
        else {
          expect(`${line} ${res.status}`).toBe(`${line} 403`);
          expect(res.json().title).toBe('Forbidden');
        }
        checked.push(line);
      }
    }
    // a manager is refused creating locations and operators (and webhooks, whose operations are `admin`)
    expect(checked).toEqual(
      expect.arrayContaining([
        'manager POST /admin/v1/locations',
        'manager POST /admin/v1/operators',
        'manager GET /metrics',
      ]),
    );
    expect(await stack.admin.listOperators({ limit: 1000 })).toHaveLength(4);
  });

  it('an operator stream scoped to A refuses B, as a missing location', async () => {
    const open = async (locationId: string) => {
      const aborter = new AbortController();
      const res = await fetch(`${stack.origin}/admin/v1/locations/${locationId}/stream`, {
        headers: bearer(managerA.token),
        signal: aborter.signal,
      });
      const status = res.status;
      const type = res.headers.get('content-type');
      aborter.abort();
      await res.body?.cancel().catch(() => undefined);
      return { status, type };
    };
    expect(await open(locationA)).toMatchObject({ status: 200, type: expect.stringMatching(/^text\/event-stream/) });
    expect(await open(locationB)).toMatchObject({ status: 404 });
  });

  it('Bull Board and /metrics are refused to non-admins; Bull Board writes are audited', async () => {
    for (const token of [managerA.token, viewer.token]) {
      for (const headers of [bearer(token), basic(token)]) {
        const page = await call('GET', `${stack.origin}/admin/queues`, { headers });
        expect(page.status).toBe(403);
        expect(page.json().title).toBe('Forbidden');
      }
      expect((await get(token, '/metrics')).status).toBe(403);
    }
    expect((await call('GET', `${stack.origin}/metrics`)).status).toBe(401);
    expect((await get(adminOperator.token, '/metrics')).status).toBe(200);
    expect((await call('GET', `${stack.origin}/admin/queues`, { headers: basic(adminOperator.token) })).status).toBe(
      200,
    );

    // a writable board's action: refused to a manager, done for an admin, each audited once
    const retry = '/admin/queues/api/queues/order-work/retry/failed';
    const refused = await write(managerA.token, 'PUT', retry, {
      headers: { 'content-type': 'application/json' },
      body: {},
    });
    expect(refused.res.status).toBe(403);
    expect(refused.record).toMatchObject({ operatorId: managerA.id, status: 403 });
    const done = await write(adminOperator.token, 'PUT', retry, {
      headers: { 'content-type': 'application/json' },
      body: {},
    });
    expect(done.res.status).toBe(200);
    expect(done.record).toMatchObject({
      operatorId: adminOperator.id,
      role: 'admin',
      route: '/admin/queues/api/queues/:queueName/retry/:queueStatus',
      targets: { queueName: 'order-work', queueStatus: 'failed' },
      status: 200,
    });
  });

  it('manages operators: a token shown once, a role or scope change holds at once, and no secret in the log', async () => {
    const created = await write(adminOperator.token, 'POST', '/admin/v1/operators', {
      body: { name: 'Temp', role: 'manager', locationIds: [locationB] },
    });
    expect(created.res.status).toBe(201);
    const temp = created.res.json() as IssuedOperator;
    secrets.push(temp.token);
    expect(JSON.stringify(created.record)).not.toContain(temp.token);
    expect(await stack.admin.getOperator(temp.id)).toEqual({
      id: temp.id,
      name: 'Temp',
      role: 'manager',
      locationIds: [locationB],
      createdAt: temp.createdAt,
    });
    expect((await get(temp.token, `/admin/v1/locations/${locationB}`)).status).toBe(200);

    const widened = await write(stack.env.ADMIN_TOKEN!, 'PATCH', `/admin/v1/operators/${temp.id}`, {
      body: { role: 'viewer', allLocations: true },
    });
    expect(widened.res.json()).toMatchObject({ role: 'viewer' });
    expect(widened.record).toMatchObject({ targets: { operatorId: temp.id } });
    expect((await get(temp.token, `/admin/v1/locations/${locationA}`)).status).toBe(200);
    expect(
      (await write(temp.token, 'POST', `/admin/v1/locations/${locationB}/orders`, { body: { rows: sampleRows } })).res
        .status,
    ).toBe(403);

    const rotated = await write(stack.env.ADMIN_TOKEN!, 'POST', `/admin/v1/operators/${temp.id}/rotate-token`);
    const fresh = rotated.res.json() as IssuedOperator;
    secrets.push(fresh.token);
    expect(JSON.stringify(rotated.record)).not.toContain(fresh.token);
    expect((await get(temp.token, '/admin/v1/locations')).status).toBe(401);
    expect((await get(fresh.token, '/admin/v1/locations')).status).toBe(200);

    expect((await write(stack.env.ADMIN_TOKEN!, 'DELETE', `/admin/v1/operators/${temp.id}`)).res.status).toBe(204);
    expect((await get(fresh.token, '/admin/v1/locations')).status).toBe(401);
    expect((await write(stack.env.ADMIN_TOKEN!, 'DELETE', `/admin/v1/operators/${temp.id}`)).res.status).toBe(404);
  });

  it('keeps no secret anywhere in the audit log', async () => {
    const log = JSON.stringify(await stack.admin.listAudit({ limit: 1000 }));
    expect(log.length).toBeGreaterThan(1000);
    for (const secret of secrets) expect(log).not.toContain(secret);
  });
});

describe("a deleted operator's token across two API nodes", () => {
  let env: StackEnv;
  let nodes: (ChildRole & { port?: number })[] = [];

  beforeAll(async () => {
    env = stackEnv();
    nodes = await Promise.all([spawnRole('api', env), spawnRole('api', env)]);
  });
  afterAll(() => stopRoles(nodes, 'kill'));

  it('fails on both nodes as soon as the deletion has answered', async () => {
    const root = new AdminClient(roleOrigin(nodes[0]!), env.ADMIN_TOKEN!);
    await root.createLocation('Two nodes');
    const [first, second] = [nodes[0]!, nodes[1]!];
    for (const [deleter, other] of [
      [first, second],
      [second, first],
    ] as const) {
      const operator = await root.createOperator({ name: 'Soon gone', role: 'viewer' });
      const list = (node: { port?: number }) =>
        call('GET', `${roleOrigin(node)}/admin/v1/locations`, { headers: bearer(operator.token) });
      // each node has the token cached
      for (const node of [deleter, other, deleter, other]) expect((await list(node)).status).toBe(200);
      const deleted = await call('DELETE', `${roleOrigin(deleter)}/admin/v1/operators/${operator.id}`, {
        headers: bearer(env.ADMIN_TOKEN!),
      });
      expect(deleted.status).toBe(204);
      for (const node of [other, deleter]) {
        const refused = await list(node);
        expect(refused.status).toBe(401);
        expect(refused.json().title).toBe('Unauthorized');
      }
    }
  });

  it("ends the deleted operator's open streams on every node, as a closed session's", async () => {
    const root = new AdminClient(roleOrigin(nodes[0]!), env.ADMIN_TOKEN!);
    const location = await root.createLocation('Streams end');
    const operator = await root.createOperator({ name: 'Watching', role: 'viewer' });
    const ended = nodes.map(async (node) => {
      const res = await fetch(`${roleOrigin(node)}/admin/v1/locations/${location.id}/stream`, {
        headers: bearer(operator.token),
      });
      expect(res.status).toBe(200);
      // the body ends when the server ends the stream
      await res.text();
      return 'ended';
    });
    // both streams are open (each node logs it)
    await eventually(() => nodes.every((node) => logged(node, 'stream opened') === 1), 'both streams open');
    const deleted = await call('DELETE', `${roleOrigin(nodes[1]!)}/admin/v1/operators/${operator.id}`, {
      headers: bearer(env.ADMIN_TOKEN!),
    });
    expect(deleted.status).toBe(204);
    await expect(Promise.all(ended)).resolves.toEqual(['ended', 'ended']);
    await eventually(
      () => nodes.every((node) => node.output().includes('"reason":"operator-changed"')),
      'both streams ended for the change',
    );
  });
});

describe('a node that missed an operator change while cut off from Redis', () => {
  let env: StackEnv;
  let proxy: TcpProxy;
  let cutOff: ChildRole & { port?: number };
  let other: ChildRole & { port?: number };

  beforeAll(async () => {
    env = stackEnv();
    proxy = await TcpProxy.start(env.REDIS_URL!);
    [cutOff, other] = await Promise.all([spawnRole('api', { ...env, REDIS_URL: proxy.url() }), spawnRole('api', env)]);
  });
  afterAll(async () => {
    await stopRoles([cutOff, other], 'kill');
    await proxy?.close();
  });

  it("reads its streams' operators again once it is back, and ends the deleted one's stream alone", async () => {
    const root = new AdminClient(roleOrigin(other), env.ADMIN_TOKEN!);
    const location = await root.createLocation('Missed change');
    const [gone, staying] = await Promise.all([
      root.createOperator({ name: 'Deleted meanwhile', role: 'viewer' }),
      root.createOperator({ name: 'Unchanged', role: 'viewer' }),
    ]);
    const open = async (operator: IssuedOperator) => {
      const stream = await TestStream.open(`${roleOrigin(cutOff)}/admin/v1/locations/${location.id}/stream`, {
        headers: bearer(operator.token),
      });
      expect(stream.status).toBe(200);
      return stream;
    };
    const [goneStream, stayingStream] = [await open(gone), await open(staying)];
    try {
      await proxy.cut();
      await eventually(
        () => logged(cutOff, 'redis subscriptions lost; restoring them') === 1,
        'the node to see Redis lost',
      );
      // deleted through the other node: its announcement never reaches the cut-off node
      expect(
        (
          await call('DELETE', `${roleOrigin(other)}/admin/v1/operators/${gone.id}`, {
            headers: bearer(env.ADMIN_TOKEN!),
          })
        ).status,
      ).toBe(204);
      expect(goneStream.isEnded).toBe(false);

      await proxy.restore();
      await goneStream.end(10_000);
      await eventually(() => logged(cutOff, 'stream ended') === 1, 'the stream ended on the node');
      expect(cutOff.output()).toContain('"reason":"operator-changed"');
      expect(stayingStream.isEnded).toBe(false);
    } finally {
      goneStream.close();
      stayingStream.close();
    }
  });
});
