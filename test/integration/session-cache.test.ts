/**
 * The session cache of the API nodes (docs/security.md#session-cache): a register's requests read no
 * session once its key is cached, and yet no node accepts a key once its close has answered,
 * nor a session past its expiry, nor anything while its subscriber connection is down.
 * Two API nodes and a worker as child processes; node B reaches Redis through a proxy that the
 * test cuts.
 */
import { AdminClient } from '@pos/shared/clients/admin-client';
import { adminHeader, call } from '../support/http';
import { mongoCommandsFor } from '../support/metrics';
import { roleOrigin, stopRoles } from '../support/roles';
import { ChildRole, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { TcpProxy } from '../../scripts/embedded/tcp-proxy';
import { eventually, pause } from '../support/wait';

const SESSION_NOT_VALID = '{"error":"Session not valid"}';
const UNAUTHORIZED = '{"message":"Unauthorized","uid":null}';
const poll = (node: { port?: number }, key: string) =>
  call('GET', `${roleOrigin(node)}/api/v1/orders/location`, { apiKey: key });

describe('session cache across two API nodes', () => {
  let env: StackEnv;
  let proxy: TcpProxy;
  let nodeA: ChildRole & { port?: number };
  let nodeB: ChildRole & { port?: number };
  let worker: ChildRole;
  let admin: AdminClient;
  let locationId: string;

  beforeAll(async () => {
    env = stackEnv();
    proxy = await TcpProxy.start(env.REDIS_URL!);
    [nodeA, nodeB, worker] = await Promise.all([
      spawnRole('api', env),
      spawnRole('api', { ...env, REDIS_URL: proxy.url() }),
      spawnRole('worker', env),
    ]);
    admin = new AdminClient(roleOrigin(nodeA), env.ADMIN_TOKEN!);
    locationId = (await admin.createLocation('Session cache')).id;
  });
  afterAll(async () => {
    await stopRoles([nodeA, nodeB, worker], 'kill');
    await proxy?.close();
  });

  /** A register key, used on both nodes so that each has it cached. */
  async function cachedRegister(): Promise<{ key: string; sessionId: string }> {
    const session = await admin.createServiceSession(locationId, `register-${Math.random()}`);
    for (const node of [nodeA, nodeB]) expect((await poll(node, session.apiKey)).status).toBe(200);
    return { key: session.apiKey, sessionId: session.sessionId };
  }

  it('reads no session for a cached key: a poll is one MongoDB command', async () => {
    const { key } = await cachedRegister();
    for (const node of [nodeA, nodeB]) {
      const polls = async () => {
        for (let i = 0; i < 5; i++) expect((await poll(node, key)).status).toBe(200);
      };
      expect(await mongoCommandsFor(roleOrigin(node), polls)).toBe(5);
    }
  });

  it('refuses a key on every node as soon as its close has answered', async () => {
    for (const [closer, other] of [
      [nodeA, nodeB],
      [nodeB, nodeA],
    ] as const) {
      const { key, sessionId } = await cachedRegister();
      const closed = await call('DELETE', `${roleOrigin(closer)}/admin/v1/sessions/${sessionId}`, {
        headers: adminHeader(env),
      });
      expect(closed.status).toBe(204);
      for (const node of [other, closer]) {
        const refused = await poll(node, key);
        expect(refused.status).toBe(401);
        expect(refused.text).toBe(SESSION_NOT_VALID);
      }
    }
  });

  it('refuses a customer key on the other node once the customer closed its own session', async () => {
    const session = await admin.createCustomerSession(locationId, 4242, 7);
    const customerGet = (node: { port?: number }) =>
      call('GET', `${roleOrigin(node)}/api/v1/customer/orders/999`, { apiKey: session.apiKey });
    for (const node of [nodeA, nodeB]) expect((await customerGet(node)).status).toBe(400); // known key, no such order
    expect(
      (await call('DELETE', `${roleOrigin(nodeA)}/api/v1/customer/session`, { apiKey: session.apiKey })).status,
    ).toBe(204);
    const refused = await customerGet(nodeB);
    expect(refused.status).toBe(401);
    expect(refused.text).toBe(SESSION_NOT_VALID);
  });

  it('refuses a key replaced twice on every node as soon as the second rotation has answered', async () => {
    const { key, sessionId } = await cachedRegister();
    await admin.rotateKey(sessionId);
    const { apiKey: third } = await admin.rotateKey(sessionId);
    for (const node of [nodeB, nodeA]) {
      const refused = await poll(node, key);
      expect(refused.status).toBe(401);
      expect(refused.text).toBe(SESSION_NOT_VALID);
      expect((await poll(node, third)).status).toBe(200);
    }
  });

  it('judges expiry on every request, cached or not', async () => {
    const expiresAt = new Date(Date.now() + 2_500);
    const session = await admin.createServiceSession(locationId, 'expiring', expiresAt.toISOString());
    for (const node of [nodeA, nodeB]) expect((await poll(node, session.apiKey)).status).toBe(200);
    // The clock passing the expiry is what is tested: the key is cached on both nodes, where a
    // session moved back in time in MongoDB would not be seen.
    await pause(expiresAt.getTime() - Date.now() + 50);
    for (const node of [nodeA, nodeB]) {
      const refused = await poll(node, session.apiKey);
      expect(refused.status).toBe(401);
      expect(refused.text).toBe(UNAUTHORIZED);
    }
  });

  it('a node cut off from Redis trusts no cached session: a close it could not hear of still holds', async () => {
    const { key, sessionId } = await cachedRegister();
    const later = await cachedRegister();
    const other = await cachedRegister();
    await proxy.cut();
    try {
      // The closes go through node A and the worker; node B cannot hear of them.
      await admin.closeSession(sessionId);
      await admin.closeSession(later.sessionId);
      const refused = await poll(nodeB, key);
      expect(refused.status).toBe(401);
      expect(refused.text).toBe(SESSION_NOT_VALID);
      // Polls need only MongoDB: a valid key still works, read from MongoDB every time.
      const polls = async () => {
        expect((await poll(nodeB, other.key)).status).toBe(200);
        expect((await poll(nodeB, other.key)).status).toBe(200);
      };
      expect(await mongoCommandsFor(roleOrigin(nodeB), polls)).toBe(4);
    } finally {
      await proxy.restore();
    }
    // Once its subscriber is back, node B caches again (and still refuses the closed key).
    await eventually(
      async () => {
        await poll(nodeB, other.key);
        return (await mongoCommandsFor(roleOrigin(nodeB), () => poll(nodeB, other.key))) === 1;
      },
      'node B to cache again',
      20_000,
    );
    // What it had cached before the cut is gone: the key closed meanwhile, first used now, is refused.
    const afterwards = await poll(nodeB, later.key);
    expect(afterwards.status).toBe(401);
    expect(afterwards.text).toBe(SESSION_NOT_VALID);
  });
});
