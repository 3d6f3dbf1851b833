/**
 * What the location board needs of the admin API, over real HTTP: a location's event stream
 * for the admin token (the register stream's machinery, with failure counts), its live
 * commands, status updates and acknowledgements on the location's behalf; and /board itself,
 * the static page and its assets.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@pos/shared/config';
import type { OperatorOrderRecord, OrderRecord } from '@pos/shared/domain/records';
import { createLogger } from '@pos/shared/log';
import { problemResponses } from '@pos/api/middleware/problems';
import { requestContext } from '@pos/api/middleware/request-context';
import { BOARD_CSP, BOARD_DIST, boardHandlers } from '@pos/api/routes/board';
import { routesOf } from '@pos/api/routes/mount';
import { requestPipeline } from '@pos/api/routes/pipeline';
import { BOARD_OPERATIONS } from '@pos/shared/openapi/operations';
import { startApi } from '@pos/api/server';
import { registerAt } from '../support/fixtures';
import { adminHeader, call, sampleRows } from '../support/http';
import { TestStream } from '../support/sse-client';
import { useStack } from '../support/stack';

describe('the admin API of the location board', () => {
  const stack = useStack();
  let bearer: Record<string, string>;
  const open: TestStream[] = [];

  beforeAll(async () => {
    bearer = adminHeader(stack.env);
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });

  const at = (locationId: string, rest = '') => `${stack.origin}/admin/v1/locations/${locationId}${rest}`;
  async function adminStream(locationId: string, query = '', origin = stack.origin): Promise<TestStream> {
    const stream = await TestStream.open(`${origin}/admin/v1/locations/${locationId}/stream${query}`, {
      headers: bearer,
    });
    open.push(stream);
    return stream;
  }
  async function registerStream(key: string): Promise<TestStream> {
    const stream = await TestStream.open(`${stack.baseUrl}/notifications/service/stream`, { apiKey: key });
    open.push(stream);
    return stream;
  }
  const summary = (stream: TestStream) =>
    stream.events.map((e) => `${e.event} ${e.json().number} ${e.json().state ?? ''} ${e.id}`);

  it('streams a location to the admin token: replay, live events, each order with its failure count', async () => {
    const { location, key } = await registerAt(stack, 'board-stream', 3);
    const first = await stack.admin.createOrder(location.id, sampleRows, 2);
    const command = await stack.admin.createCommand(location.id, 'REQUEST_BILL', 2);

    const stream = await adminStream(location.id);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    const register = await registerStream(key);
    await stream.eventCount(2);
    expect(summary(stream)).toEqual(['order 1 PLACED 1.0', 'command 1 PLACED 1.1']);
    expect(stream.events[0]!.json()).toEqual({ ...first, failureCount: 0 });
    expect(stream.events[1]!.json()).toEqual(command);

    // A failure report below the threshold: the order is back in PLACED with its count.
    const failed = await call('POST', `${stack.baseUrl}/orders/${first.number}/failure`, {
      apiKey: key,
      body: { reason: 'printer jam' },
    });
    expect(failed.status).toBe(200);
    await stream.eventCount(3);
    await register.eventCount(3);
    const operatorView = stream.events[2]!.json<OperatorOrderRecord>();
    const registerView = register.events[2]!.json<OrderRecord>();
    expect(operatorView).toEqual({ ...failed.json<OrderRecord>(), failureCount: 1 });
    // the register's stream carries the interface's record, without the count
    expect(registerView).toEqual(failed.json<OrderRecord>());
    expect(register.events[2]!.data).not.toContain('failureCount');
    expect(stream.events[2]!.id).toBe('1.1');

    // The order list shows the same count.
    const listed = await call('GET', at(location.id, '/orders?state=PLACED'), { headers: bearer });
    expect(listed.json()).toEqual([operatorView]);
  });

  it('resumes from a cursor, like the register stream', async () => {
    const { location } = await registerAt(stack, 'board-cursor');
    for (let i = 0; i < 3; i += 1) await stack.admin.createOrder(location.id, sampleRows);
    await stack.admin.createCommand(location.id, 'READ_TABLE_STATE', 1);
    await stack.admin.createCommand(location.id, 'EXPORT_DATA');
    const byQuery = await adminStream(location.id, '?orderNumber=2&commandNumber=1');
    await byQuery.eventCount(2);
    expect(summary(byQuery)).toEqual(['order 3 PLACED 3.1', 'command 2 PLACED 3.2']);
    const byHeader = await TestStream.open(`${at(location.id, '/stream')}`, {
      headers: { ...bearer, 'Last-Event-ID': '3.2' },
    });
    open.push(byHeader);
    await stack.admin.createOrder(location.id, sampleRows);
    await byHeader.eventCount(1);
    expect(summary(byHeader)).toEqual(['order 4 PLACED 4.2']);
    const bad = await call('GET', at(location.id, '/stream?orderNumber=-1'), { headers: bearer });
    expect(bad.status).toBe(400);
    expect(bad.json().title).toBe('Illegal argument');
  });

  it('refuses the stream without the admin token, and for a location that does not exist', async () => {
    const { location, key } = await registerAt(stack, 'board-refuse');
    const attempts: Record<string, string>[] = [
      {},
      { api_key: key },
      { authorization: `Bearer ${key}` },
      { authorization: 'Bearer wrong' },
    ];
    for (const headers of attempts) {
      const refused = await call('GET', at(location.id, '/stream'), { headers });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    const missing = await call('GET', at('no-such-location', '/stream'), { headers: bearer });
    expect(missing.status).toBe(404);
    expect(missing.json().detail).toBe('Location does not exist');
  });

  it('ends the stream when its node shuts down', async () => {
    const { location } = await registerAt(stack, 'board-shutdown');
    const second = await startApi(loadConfig(stack.env), createLogger('silent', 'test'));
    const stream = await adminStream(location.id, '', `http://127.0.0.1:${second.port}`);
    await stream.preamble();
    await second.close();
    await stream.end();
    expect(stream.isEnded).toBe(true);
  });

  it('completes and aborts orders through the queue, as a register would, with Idempotency-Key', async () => {
    const { location } = await registerAt(stack, 'board-status');
    const other = await registerAt(stack, 'board-status-other');
    const a = await stack.admin.createOrder(location.id, sampleRows, 5);
    const b = await stack.admin.createOrder(location.id, sampleRows);
    const url = (n: number) => at(location.id, `/orders/${n}/statusupdate`);

    const done = await call('PUT', url(a.number), {
      headers: { ...bearer, 'idempotency-key': 'board-complete-1' },
      body: { newState: 'COMPLETED' },
    });
    expect(done.status).toBe(200);
    expect(done.json()).toEqual({ ...a, state: 'COMPLETED', completeTime: done.json().completeTime });
    const again = await call('PUT', url(a.number), {
      headers: { ...bearer, 'idempotency-key': 'board-complete-1' },
      body: { newState: 'COMPLETED' },
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(done.text);

    const conflict = await call('PUT', url(a.number), { headers: bearer, body: { newState: 'ABORTED' } });
    expect(conflict.status).toBe(409);
    expect(conflict.json().detail).toMatch(/COMPLETED/);
    expect((await stack.admin.listOrders(location.id, 'COMPLETED')).map((o) => o.number)).toEqual([a.number]);
    const aborted = await call('PUT', url(b.number), { headers: bearer, body: { newState: 'ABORTED' } });
    expect(aborted.json().state).toBe('ABORTED');

    expect((await call('PUT', url(b.number), { headers: bearer, body: { newState: 'LOST' } })).json().detail).toBe(
      'No enum constant OrderState.LOST',
    );
    // another location's number is a missing order here
    const elsewhere = await stack.admin.createOrder(other.location.id, sampleRows);
    const missing = await call('PUT', url(elsewhere.number + 10), { headers: bearer, body: { newState: 'COMPLETED' } });
    expect(missing.status).toBe(400);
    expect(missing.json().detail).toBe('Order does not exist');
    expect(
      (
        await call('PUT', at('no-such-location', '/orders/1/statusupdate'), {
          headers: bearer,
          body: { newState: 'COMPLETED' },
        })
      ).status,
    ).toBe(404);
  });

  it('lists live commands as the register does, and acknowledges them', async () => {
    const { location, key } = await registerAt(stack, 'board-commands');
    const bill = await stack.admin.createCommand(location.id, 'REQUEST_BILL', 3);
    const read = await stack.admin.createCommand(location.id, 'READ_TABLE_STATE');
    const listed = await call('GET', at(location.id, '/commands'), { headers: bearer });
    expect(listed.status).toBe(200);
    expect(listed.json()).toEqual([bill, read]);
    const work = (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json();
    expect(work).toEqual(listed.json());

    const acknowledged = await call('DELETE', at(location.id, `/commands/${bill.number}`), {
      headers: { ...bearer, 'idempotency-key': 'board-ack-1' },
    });
    expect(acknowledged.status).toBe(200);
    expect(acknowledged.json()).toEqual(bill);
    expect(await stack.admin.listCommands(location.id)).toEqual([read]);
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json()).toEqual([read]);
    const twice = await call('DELETE', at(location.id, `/commands/${bill.number}`), { headers: bearer });
    expect(twice.status).toBe(404);
    expect(twice.json().detail).toBe('Command does not exist');
    expect((await call('DELETE', at(location.id, `/commands/${read.number}`), { apiKey: key })).status).toBe(401);
  });
});

describe('/board', () => {
  const stack = useStack({ BASE_PATH: '/pos/api/v1' });

  it('serves the page with its policy and the base path, and its hashed assets for good', async () => {
    expect(fs.existsSync(path.join(BOARD_DIST, 'index.html'))).toBe(true); // built by scripts/setup.sh
    for (const url of [`${stack.origin}/board`]) {
      const page = await call('GET', url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toBe(BOARD_CSP);
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('cache-control')).toBe('no-cache');
      expect(page.text).toContain('<meta name="pos-base-path" content="/pos/api/v1" />');
      // nothing inline: every script and style is a file of its own
      expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
      expect(page.text).not.toMatch(/<style|\sstyle=/);
    }
    const page = await call('GET', `${stack.origin}/board`);
    const assets = [...page.text.matchAll(/(?:src|href)="(\/board\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const answer = await call('GET', `${stack.origin}${asset}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('max-age=31536000,immutable');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(
      (await call('GET', `${stack.origin}${assets.find((a) => a.endsWith('.js'))}`)).headers.get('content-type'),
    ).toMatch(/javascript/);
  });

  it('answers 404 for anything else under it, and no way out of its folder', async () => {
    for (const rest of [
      '/assets/nothing-here.js',
      '/assets/..%2f..%2fpackage.json',
      '/assets/%2e%2e%2findex.html',
      '/index.html',
      '/assets/.hidden.js',
    ]) {
      const answer = await call('GET', `${stack.origin}/board${rest}`);
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await call('POST', `${stack.origin}/board`)).status).toBe(405);
  });

  it('says how to build it when its files are missing', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'board-missing-'));
    const app = new Koa();
    app.silent = true;
    app.use(requestContext(createLogger('silent', 'test')));
    app.use(problemResponses());
    const config = loadConfig(stack.env);
    app.use(
      routesOf(
        requestPipeline(stack.api.deps),
        config.http.basePath,
        BOARD_OPERATIONS,
        boardHandlers({ config }, empty),
      ).routes(),
    );
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const answer = await call('GET', `http://127.0.0.1:${(server.address() as AddressInfo).port}/board`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(answer.text).toContain('The board is not built');
      expect(answer.text).toContain('npm run build');
    } finally {
      server.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
