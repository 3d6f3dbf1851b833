/**
 * Traces, as a collector receives them (OTLP over HTTP, JSON encoding): the API and the worker
 * run as child processes with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a receiver in this test.
 * One status update is the API's server span (named by route, under the caller's traceparent),
 * the enqueue, and the worker's processing span (a trace of its own, linked to the enqueue) with
 * its MongoDB and Redis calls; no key or token is an attribute; log lines carry the trace. With no
 * endpoint, nothing of OpenTelemetry is loaded.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { registerAt } from '../support/fixtures';
import { call, sampleRows } from '../support/http';
import { TestStream } from '../support/sse-client';
import { ChildRole, ROOT, spawnRole, stackEnv, StackEnv } from '../support/stack';
import { eventually } from '../support/wait';

/** A span as a test reads it: ids in hex, attributes as plain values. */
interface ReceivedSpan {
  service: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  /** The span's whole JSON, for the search for secrets. */
  raw: string;
}

// OTLP's span kinds
const SERVER = 2;
const PRODUCER = 4;
const CONSUMER = 5;

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values: OtlpValue[] };
};
type OtlpAttribute = { key: string; value: OtlpValue };
const plain = (v: OtlpValue): unknown =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v.boolValue ??
  v.doubleValue ??
  v.arrayValue?.values.map(plain);
const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, plain(a.value)]));

/** An OTLP/HTTP receiver: keeps every span posted to /v1/traces. */
async function startReceiver() {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.startsWith('application/json')) {
        for (const resource of JSON.parse(body).resourceSpans ?? []) {
          const service = attributesOf(resource.resource?.attributes)['service.name'] as string;
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                service,
                name: span.name,
                kind: span.kind,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                attributes: attributesOf(span.attributes),
                links: (span.links ?? []).map((l: { traceId: string; spanId: string }) => ({
                  traceId: l.traceId,
                  spanId: l.spanId,
                })),
                raw: JSON.stringify(span),
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('tracing with an OTLP endpoint', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let env: StackEnv;
  let api: ChildRole & { port?: number };
  let worker: ChildRole;
  let origin: string;
  let admin: AdminClient;

  beforeAll(async () => {
    receiver = await startReceiver();
    env = stackEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    worker = await spawnRole('worker', env);
    api = await spawnRole('api', env);
    origin = `http://127.0.0.1:${api.port}`;
    admin = new AdminClient(origin, env.ADMIN_TOKEN!);
  });
  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await receiver?.close();
  });

  const inTrace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  const seen = () => receiver.spans.map((s) => `${s.service} ${s.name}`).join(', ');
  /** Whether `span` descends from `ancestor` within its trace. */
  const descends = (span: ReceivedSpan, ancestor: ReceivedSpan): boolean => {
    for (
      let at: ReceivedSpan | undefined = span;
      at;
      at = inTrace(span.traceId).find((s) => s.spanId === at!.parentSpanId)
    ) {
      if (at.parentSpanId === ancestor.spanId) return true;
    }
    return false;
  };

  it('sees one status update as the API span, the enqueue, the worker span and its MongoDB and Redis calls, tied by trace and link', async () => {
    const register = await registerAt({ admin }, 'Traced');
    const order = await admin.createOrder(register.locationId, sampleRows);
    const [traceId, parentId] = [hex(16), hex(8)];
    const res = await call('PUT', `${origin}/api/v1/orders/${order.number}/statusupdate`, {
      apiKey: register.key,
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
      body: { newState: 'COMPLETED' },
    });
    expect(res.status).toBe(200);

    // the API's server span: the caller's trace, named by route
    let server: ReceivedSpan | undefined;
    await eventually(
      () => (server = inTrace(traceId).find((s) => s.kind === SERVER)) !== undefined,
      'the API span',
      10_000,
      seen,
    );
    expect(server).toMatchObject({
      service: 'pos-api',
      name: 'PUT /api/v1/orders/{number}/statusupdate',
      parentSpanId: parentId,
    });
    expect(server!.attributes).toMatchObject({
      'http.route': '/api/v1/orders/{number}/statusupdate',
      'http.response.status_code': 200,
      'pos.location_id': register.locationId,
      'pos.order_number': order.number,
      'pos.job.name': 'order-action',
    });

    // the enqueue, under it; the wait for the reply
    let enqueue: ReceivedSpan | undefined;
    await eventually(
      () => (enqueue = inTrace(traceId).find((s) => s.kind === PRODUCER)) !== undefined,
      'the enqueue span',
      10_000,
      seen,
    );
    expect(enqueue).toMatchObject({ service: 'pos-api', name: 'add order-work.order-action' });
    expect(descends(enqueue!, server!)).toBe(true);
    await eventually(
      () => inTrace(traceId).some((s) => s.name === 'await job outcome' && s.attributes['pos.outcome.status'] === 200),
      'the reply wait',
      10_000,
      seen,
    );

    // the worker's processing: a trace of its own, linked to the enqueue
    let processing: ReceivedSpan | undefined;
    await eventually(
      () =>
        (processing = receiver.spans.find(
          (s) => s.kind === CONSUMER && s.links.some((l) => l.spanId === enqueue!.spanId),
        )) !== undefined,
      'the worker span linked to the enqueue',
      10_000,
      seen,
    );
    expect(processing).toMatchObject({ service: 'pos-worker', name: 'process order-work', parentSpanId: '' });
    expect(processing!.links).toEqual([{ traceId, spanId: enqueue!.spanId }]);
    expect(processing!.attributes).toMatchObject({
      'pos.location_id': register.locationId,
      'pos.order_number': order.number,
      'pos.outcome.status': 200,
    });

    // its MongoDB and Redis calls, and the publish of its events with the reply
    const work = processing!.traceId;
    await eventually(
      () =>
        ['mongodb', 'redis'].every((db) =>
          inTrace(work).some(
            (s) => (s.attributes['db.system'] ?? s.attributes['db.system.name']) === db && descends(s, processing!),
          ),
        ),
      'MongoDB and Redis spans under the worker span',
      10_000,
      seen,
    );
    const publish = inTrace(work).find((s) => s.name === 'publish events and reply');
    expect(publish && descends(publish, processing!)).toBe(true);
    const statements = inTrace(work)
      .map((s) => s.attributes['db.statement'] ?? s.attributes['db.query.text'])
      .filter((q) => q !== undefined);
    expect(statements.length).toBeGreaterThan(0);
    // Redis: the command alone; MongoDB: the command's shape, no value in it
    const leaves = (value: unknown): unknown[] =>
      typeof value === 'object' && value !== null ? Object.values(value).flatMap(leaves) : [value];
    for (const statement of statements as string[]) {
      if (statement.startsWith('{')) expect(new Set(leaves(JSON.parse(statement)))).toEqual(new Set(['?']));
      else expect(statement).toMatch(/^[a-z]+$/);
    }

    // no key, token, secret or order row in any span
    const everything = receiver.spans.map((s) => s.raw).join('\n');
    for (const secret of [
      register.key,
      env.ADMIN_TOKEN!,
      env.API_KEY_SECRET!,
      sampleRows[0]!.name,
      sampleRows[0]!.productId,
    ])
      expect(everything).not.toContain(secret);

    // the API's log lines of the request carry its trace
    const accessLine = api
      .output()
      .split('\n')
      .find((line) => line.includes('"msg":"request"') && line.includes('statusupdate'));
    expect(accessLine && JSON.parse(accessLine)).toMatchObject({ trace_id: traceId, span_id: server!.spanId });
  });

  it('makes the opening of an event stream a span, ended while the stream stays open; an event sent to streams a fan-out span', async () => {
    const register = await registerAt({ admin }, 'Streamed');
    const [traceId, parentId] = [hex(16), hex(8)];
    const stream = await TestStream.open(`${origin}/api/v1/notifications/service/stream`, {
      apiKey: register.key,
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
    });
    try {
      await eventually(() => inTrace(traceId).some((s) => s.kind === SERVER), 'the stream-open span', 10_000, seen);
      expect(inTrace(traceId).find((s) => s.kind === SERVER)).toMatchObject({
        service: 'pos-api',
        name: 'GET /api/v1/notifications/service/stream',
        parentSpanId: parentId,
        attributes: { 'http.route': '/api/v1/notifications/service/stream', 'http.response.status_code': 200 },
      });
      // an order created for the location reaches the stream: one fan-out span on the node
      await admin.createOrder(register.locationId, sampleRows);
      await eventually(
        () =>
          receiver.spans.some(
            (s) =>
              s.name === 'fan-out' &&
              s.attributes['pos.location_id'] === register.locationId &&
              s.attributes['pos.streams'] === 1,
          ),
        'the fan-out span',
        10_000,
        seen,
      );
      expect(receiver.spans.map((s) => s.raw).join('\n')).not.toContain(register.key);
    } finally {
      stream.close();
    }
  });
});

describe('tracing a job run again after its worker died', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let env: StackEnv;
  let api: ChildRole & { port?: number };

  beforeAll(async () => {
    receiver = await startReceiver();
    env = stackEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      // the dead worker's job is taken over within seconds; the request waits for it
      JOB_LOCK_DURATION: '1s',
      JOB_TIMEOUT: '45s',
    });
    api = await spawnRole('api', env);
  });
  afterAll(async () => {
    await api?.stop();
    await receiver?.close();
  });

  it('gives the re-run a trace of its own, linked to the enqueue, not a child of the request', async () => {
    const origin = `http://127.0.0.1:${api.port}`;
    const register = await registerAt({ admin: new AdminClient(origin, env.ADMIN_TOKEN!) }, 'Rerun', 5);
    const order = await new AdminClient(origin, env.ADMIN_TOKEN!).createOrder(register.locationId, sampleRows);
    const traceId = hex(16);
    const doomed = await spawnRole('worker', { ...env, FAULT_INJECT: 'crash-before-apply' });
    const answer = call('POST', `${origin}/api/v1/orders/${order.number}/failure`, {
      apiKey: register.key,
      headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
      body: { reason: 'paper out' },
    });
    await doomed.exited;
    const rescuer = await spawnRole('worker', env);
    try {
      expect((await answer).status).toBe(200);
      const seen = () => receiver.spans.map((s) => `${s.service} ${s.name} ${s.traceId}`).join(', ');
      let enqueue: ReceivedSpan | undefined;
      await eventually(
        () => (enqueue = receiver.spans.find((s) => s.traceId === traceId && s.kind === PRODUCER)) !== undefined,
        'the enqueue',
        10_000,
        seen,
      );
      let rerun: ReceivedSpan | undefined;
      await eventually(
        () =>
          (rerun = receiver.spans.find(
            (s) => s.kind === CONSUMER && s.service === 'pos-worker' && s.name === 'process order-work',
          )) !== undefined,
        'the re-run',
        10_000,
        seen,
      );
      expect(rerun!.traceId).not.toBe(traceId);
      expect(rerun).toMatchObject({
        name: 'process order-work',
        parentSpanId: '',
        links: [{ traceId, spanId: enqueue!.spanId }],
      });
      expect(rerun!.attributes).toMatchObject({
        'pos.order_number': order.number,
        'pos.order.action': 'failure',
        'pos.outcome.status': 200,
      });
      // nothing the worker did joined the request's trace
      expect(receiver.spans.filter((s) => s.traceId === traceId).map((s) => s.service)).not.toContain('pos-worker');
    } finally {
      expect(await rescuer.stop()).toBe(0);
    }
  });
});

describe('tracing with no OTLP endpoint', () => {
  /**
   * The OpenTelemetry modules (the SDK, instrumentations, exporters) a process
   * has loaded once the API and the worker modules are.
   */
  async function loadedTelemetry(extra: StackEnv): Promise<string[]> {
    const script = [
      "require('./services/api/src/tracing');",
      "require('./services/api/src/server');",
      "require('./services/worker/src/worker');",
      "const { tracing } = require('./shared/src/telemetry/tracing');",
      // (the API package, a no-op without the SDK, is loaded by prom-client whatever we do)
      'const loaded = Object.keys(require.cache).filter((p) => /@opentelemetry\\/(?!api\\/)|bullmq-otel/.test(p));',
      'process.stdout.write(JSON.stringify({ on: tracing() !== undefined, loaded }));',
    ].join('\n');
    const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
    for (const name of Object.keys(env)) if (name.startsWith('OTEL_') && !(name in extra)) delete env[name];
    const { stdout } = await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
      cwd: ROOT,
      env,
    });
    const { on, loaded } = JSON.parse(stdout) as { on: boolean; loaded: string[] };
    return on ? ['(on)', ...loaded] : loaded;
  }

  it('loads nothing of OpenTelemetry', async () => {
    expect(await loadedTelemetry({})).toEqual([]);
    // the check itself: an endpoint loads the SDK
    expect((await loadedTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).length).toBeGreaterThan(1);
  });
});
