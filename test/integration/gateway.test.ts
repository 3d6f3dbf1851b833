/**
 * deploy/nginx.conf under Debian's real nginx, in front of an API node on one listener (no
 * ADMIN_PORT, so the node itself would serve the operator paths): the gateway alone must turn
 * away every spelling of them, and pass the register interface (api_key header, event stream).
 */
import { expectNoOperatorContent, keyIssuingPaths, OPERATOR_GETS } from '../support/front-door';
import { Gateway, startGateway } from '../support/gateway';
import { adminHeader, call, rawCall, sampleRows } from '../support/http';
import { streamPath, TestStream } from '../support/sse-client';
import { useStack } from '../support/stack';
import { TcpProxy } from '../../scripts/embedded/tcp-proxy';
import { eventually, pause } from '../support/wait';

/** Longer than the 5 s after which Node, by default, closed an idle keep-alive connection. */
const IDLE_MS = 6_500;

describe('the nginx gateway (deploy/nginx.conf)', () => {
  const stack = useStack();
  let gateway: Gateway;
  let token: Record<string, string>;
  let locationId: string;
  let apiKey: string;

  beforeAll(async () => {
    gateway = await startGateway(stack.api.port);
    token = adminHeader(stack.env);
    locationId = (await stack.admin.createLocation('Gateway')).id;
    apiKey = (await stack.admin.createServiceSession(locationId, 'register-gw')).apiKey;
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  /** nginx's own 404 (text/html), not the API's problem: the request never reached the node. */
  const expectBlockedAtTheDoor = (res: Awaited<ReturnType<typeof rawCall>>, path: string) => {
    expect(`${path} ${res.status} ${res.headers.get('content-type')}`).toBe(`${path} 404 text/html`);
    expectNoOperatorContent(res.text, path);
  };

  it('blocks every spelling of /metrics and Bull Board, whatever the case, encoding or dot segments', async () => {
    for (const path of OPERATOR_GETS)
      expectBlockedAtTheDoor(await rawCall(gateway.origin, 'GET', path, { headers: token }), path);
  });

  it('issues no key through the door, whatever the spelling of the admin route', async () => {
    for (const path of keyIssuingPaths(locationId)) {
      expectBlockedAtTheDoor(
        await rawCall(gateway.origin, 'POST', path, { headers: token, body: { deviceId: 'intruder' } }),
        path,
      );
    }
    // the node behind it would have: only the door stood in the way
    expect(
      (
        await rawCall(stack.origin, 'POST', keyIssuingPaths(locationId)[0]!, {
          headers: token,
          body: { deviceId: 'x' },
        })
      ).status,
    ).toBe(201);
  });

  it('passes the register interface: the api_key header, the problems, the health probe', async () => {
    const work = await call('GET', `${gateway.origin}/api/v1/orders/location`, { apiKey });
    expect(work.status).toBe(200);
    expect(work.json()).toEqual([]);
    const problem = await call('PUT', `${gateway.origin}/api/v1/orders/abc/statusupdate`, {
      apiKey,
      body: { newState: 'COMPLETED' },
    });
    expect(problem.status).toBe(400);
    expect(problem.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await call('GET', `${gateway.origin}/healthz`)).status).toBe(200);
  });

  it('passes each stream event on at once', async () => {
    const stream = await TestStream.open(`${gateway.origin}${streamPath}`, { apiKey });
    try {
      expect(stream.status).toBe(200);
      await stream.preamble();
      const order = await stack.admin.createOrder(locationId, sampleRows);
      const [event] = await stream.eventCount(1);
      expect(event!.json()).toEqual(order);
    } finally {
      stream.close();
    }
  });

  it('reuses its idle upstream connection: the node keeps it longer than nginx does', async () => {
    // between nginx and the node, a proxy that counts the connections nginx opens
    const proxy = await TcpProxy.start(stack.origin);
    const door = await startGateway(proxy.port);
    try {
      expect((await call('GET', `${door.origin}/api/v1/orders/location`, { apiKey })).status).toBe(200);
      expect(proxy.accepted).toBe(1);
      // The idle period is the subject of the test, not a wait for something.
      await pause(IDLE_MS);
      const order = await stack.admin.createOrder(locationId, sampleRows);
      const put = await call('PUT', `${door.origin}/api/v1/orders/${order.number}/statusupdate`, {
        apiKey,
        body: { newState: 'COMPLETED' },
      });
      expect(put.status).toBe(200);
      expect(put.json().state).toBe('COMPLETED');
      // sent on the connection kept from the first request: the node had not closed it
      expect(proxy.accepted).toBe(1);
    } finally {
      await door.stop();
      await proxy.close();
    }
  }, 30_000);

  it('answers 429 itself to an address past its burst of requests (limit_req), and the next second serves it again', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 160 }, () => rawCall(gateway.origin, 'GET', '/healthz').then((res) => res.status)),
    );
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(100);
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
    // 50 a second refill the bucket: the refusal lasts only while the address sends too fast
    await eventually(
      async () => (await rawCall(gateway.origin, 'GET', '/healthz')).status === 200,
      'the address served again',
      5_000,
    );
  });

  it('answers 429 to an address holding 100 requests in flight (limit_conn): event streams count', async () => {
    const streams: TestStream[] = [];
    // the burst the test before spent refills at 50 a second: opening 100 streams needs it whole
    await pause(2_500);
    try {
      for (let i = 0; i < 25; i++) {
        const key = (await stack.admin.createServiceSession(locationId, `register-conn-${i}`)).apiKey;
        for (let j = 0; j < 4; j++)
          streams.push(await TestStream.open(`${gateway.origin}${streamPath}`, { apiKey: key }));
      }
      expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
      expect((await rawCall(gateway.origin, 'GET', '/healthz')).status).toBe(429);
      streams.pop()!.close();
      await eventually(
        async () => (await rawCall(gateway.origin, 'GET', '/healthz')).status === 200,
        'room for one more',
      );
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  it('logs no query string (a key may travel in it)', async () => {
    await call('GET', `${gateway.origin}/api/v1/orders/location?api_key=${encodeURIComponent(apiKey)}`);
    // nginx writes the access line after answering
    await eventually(() => gateway.output().includes('/api/v1/orders/location?[query redacted]'), 'the access line');
    expect(gateway.output()).not.toContain(apiKey);
  });
});
