import { buildInfo } from '@pos/shared/build-info';
import Redis from 'ioredis';
import { RegisterClient, WorkStream } from '@pos/shared/clients/register/client';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { startRedisServer } from '../../scripts/embedded/redis-server';
import { adminHeader, call, sampleRows, statusUpdate } from '../support/http';
import { metricsText, mongoCommandsFor, parseMetrics, Sample, valueOf } from '../support/metrics';
import { ChildRole, spawnRole, startStack, useStack } from '../support/stack';
import { eventually } from '../support/wait';

describe('GET /metrics', () => {
  const stack = useStack();

  async function scrape(): Promise<Sample[]> {
    const res = await call('GET', `${stack.origin}/metrics`, { headers: adminHeader(stack.env) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(res.text);
  }

  it('answers Prometheus text without credentials, with process metrics', async () => {
    const samples = await scrape();
    expect(valueOf(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(valueOf(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(valueOf(samples, 'pos_streams_open')).toBe(0);
  });

  it('counts requests by route pattern and status, never by raw URL', async () => {
    const loc = await stack.admin.createLocation('Metrics');
    const key = (await stack.admin.createServiceSession(loc.id, 'reg-1')).apiKey;
    // counted from here: whatever the file's other tests asked before
    const before = await scrape();
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).status).toBe(200);
    expect(
      (await call('PUT', `${stack.baseUrl}/orders/4242/statusupdate`, { apiKey: key, body: { newState: 'COMPLETED' } }))
        .status,
    ).toBe(400);
    expect((await call('GET', `${stack.origin}/no/such/path/123`)).status).toBe(404);
    const samples = await scrape();
    const counted = (name: string, labels: Record<string, string>) =>
      (valueOf(samples, name, labels) ?? 0) - (valueOf(before, name, labels) ?? 0);
    expect(counted('pos_http_requests_total', { method: 'GET', route: '/api/v1/orders/location', status: '200' })).toBe(
      1,
    );
    expect(
      counted('pos_http_requests_total', {
        method: 'PUT',
        route: '/api/v1/orders/:number/statusupdate',
        status: '400',
      }),
    ).toBe(1);
    expect(counted('pos_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).toBe(1);
    expect(
      counted('pos_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/v1/orders/location',
        status: '200',
      }),
    ).toBe(1);
    expect(
      samples.some((s) => (s.labels.route ?? '').includes('4242') || (s.labels.route ?? '').includes('/no/such')),
    ).toBe(false);
  });

  it('reports queue depth, job latency and published events after a status update', async () => {
    const loc = await stack.admin.createLocation('Metrics jobs');
    const key = (await stack.admin.createServiceSession(loc.id, 'reg-1')).apiKey;
    const before = await scrape();
    const order = await stack.admin.createOrder(loc.id, sampleRows);
    const done = await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED');
    expect(done.status).toBe(200);
    const after = await scrape();
    for (const state of ['waiting', 'active', 'delayed', 'failed', 'completed']) {
      expect(valueOf(after, 'pos_queue_jobs', { state })).toEqual(expect.any(Number));
    }
    expect(valueOf(after, 'pos_queue_jobs', { state: 'completed' })).toBeGreaterThanOrEqual(1);
    const jobs = (samples: typeof after) =>
      valueOf(samples, 'pos_job_duration_seconds_count', { job: 'order-action', status: '200' }) ?? 0;
    expect(jobs(after) - jobs(before)).toBe(1);
    expect(valueOf(after, 'pos_job_duration_seconds_bucket', { job: 'order-action', status: '200', le: '+Inf' })).toBe(
      jobs(after),
    );
    const published = (samples: typeof after) => valueOf(samples, 'pos_events_published_total', { type: 'order' }) ?? 0;
    expect(published(after) - published(before)).toBe(1);
  });

  it('reports open streams and delivered events', async () => {
    const loc = await stack.admin.createLocation('Metrics streams');
    const key = (await stack.admin.createServiceSession(loc.id, 'reg-1')).apiKey;
    const received: number[] = [];
    let stream: WorkStream | undefined;
    try {
      const opened = new Promise<void>((resolve) => {
        stream = new RegisterClient({ baseUrl: stack.baseUrl, apiKey: key }).openStream({
          onOrder: (o) => void received.push(o.number),
          onState: (s) => s.state === 'open' && resolve(),
        });
      });
      await opened;
      const order = await stack.admin.createOrder(loc.id, sampleRows);
      await eventually(() => received.includes(order.number), 'the order received on the stream');
      const samples = await scrape();
      expect(valueOf(samples, 'pos_streams_open')).toBe(1);
      expect(valueOf(samples, 'pos_events_delivered_total', { type: 'order' })).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, 'pos_events_received_total', { type: 'order' })).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, 'pos_pubsub_channels')).toBeGreaterThanOrEqual(2);
      // the event's fan-out on this node, publish to last write
      expect(valueOf(samples, 'pos_fanout_seconds_count')).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, 'pos_fanout_seconds_sum')).toBeGreaterThan(0);
    } finally {
      await stream?.close();
    }
  });

  it('counts the MongoDB commands the node sends', async () => {
    const loc = await stack.admin.createLocation('Metrics MongoDB');
    const key = (await stack.admin.createServiceSession(loc.id, 'reg-mongo')).apiKey;
    const poll = async () =>
      expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).status).toBe(200);
    // the session (not cached yet) and the work, one read each
    expect(await mongoCommandsFor(stack.origin, poll)).toBe(2);
  });
});

describe('GET /metrics of a worker (METRICS_PORT)', () => {
  const stack = useStack({}, { worker: false });
  let worker: ChildRole;
  let origin: string;
  beforeAll(async () => {
    worker = await spawnRole('worker', { ...stack.env, METRICS_PORT: '0' });
    origin = `http://127.0.0.1:${/"metricsPort":(\d+)/.exec(worker.output())![1]}`;
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it('reports its MongoDB commands and the jobs it finished; nothing else is served there but /healthz', async () => {
    const loc = await stack.admin.createLocation('Worker metrics');
    const key = (await stack.admin.createServiceSession(loc.id, 'reg-w')).apiKey;
    const order = await stack.admin.createOrder(loc.id, sampleRows);
    expect((await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED')).status).toBe(200);
    // BullMQ's 'completed' (which counts the job) follows the answer by a Redis round trip
    let samples: Sample[] = [];
    const finished = () => valueOf(samples, 'pos_jobs_processed_total', { job: 'order-action', status: '200' });
    await eventually(async () => {
      const res = await call('GET', `${origin}/metrics`);
      expect(res.status).toBe(200);
      samples = parseMetrics(res.text);
      return finished() !== undefined;
    }, 'the job counted');
    expect(finished()).toBe(1);
    expect(valueOf(samples, 'pos_mongo_commands_total')).toBeGreaterThanOrEqual(2);
    expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect((await call('GET', `${origin}/admin/v1/locations`)).status).toBe(404);
    // its liveness probe (docs/deployment.md#kubernetes)
    const health = await call('GET', `${origin}/healthz`);
    expect([health.status, health.json()]).toEqual([
      200,
      { status: 'ok', version: buildInfo().version, commit: buildInfo().commit },
    ]);
    expect(valueOf(samples, 'pos_build_info', { ...buildInfo() })).toBe(1);
  });
});

describe('Redis memory on /metrics', () => {
  let redisServer: ChildServer;
  let redis: Redis;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let node: string;

  beforeAll(async () => {
    redisServer = await startRedisServer();
    redis = new Redis(redisServer.url);
    stack = await startStack({ REDIS_URL: redisServer.url });
    node = new URL(redisServer.url).host;
  });
  afterAll(async () => {
    redis?.disconnect();
    await stack?.close();
    await redisServer?.stop();
  });

  const scrape = async () =>
    parseMetrics((await call('GET', `${stack.origin}/metrics`, { headers: adminHeader(stack.env) })).text);
  const info = async (field: string) =>
    Number(new RegExp(`^${field}:(\\d+)`, 'm').exec(await redis.info('memory'))![1]);

  it('reports used memory and maxmemory as INFO memory does, by node; a hung Redis leaves them out without holding the scrape, and reads as not ready', async () => {
    await redis.config('SET', 'maxmemory', String(256 * 1024 * 1024));
    const before = await info('used_memory');
    const samples = await scrape();
    const after = await info('used_memory');
    expect(valueOf(samples, 'pos_redis_memory_max_bytes', { node })).toBe(256 * 1024 * 1024);
    const used = valueOf(samples, 'pos_redis_memory_used_bytes', { node })!;
    // INFO read just before and after: the scrape's own reading lies about there
    expect(used).toBeGreaterThan(Math.min(before, after) - 1024 * 1024);
    expect(used).toBeLessThan(Math.max(before, after) + 1024 * 1024);
    expect(samples.filter((s) => s.name === 'pos_redis_memory_used_bytes')).toHaveLength(1);

    await redis.config('SET', 'maxmemory', '0');
    expect(valueOf(await scrape(), 'pos_redis_memory_max_bytes', { node })).toBe(0);

    process.kill(redisServer.process.pid!, 'SIGSTOP');
    try {
      const res = await call('GET', `${stack.origin}/metrics`, { headers: adminHeader(stack.env) });
      expect(res.status).toBe(200);
      // each scrape-time read has a deadline of a second
      expect(res.ms).toBeLessThan(5_000);
      const hung = parseMetrics(res.text);
      expect(valueOf(hung, 'pos_redis_memory_used_bytes', { node })).toBeUndefined();
      // what /readyz would answer: not ready, Redis not reached, MongoDB still reached
      expect(valueOf(hung, 'pos_ready')).toBe(0);
      expect(valueOf(hung, 'pos_dependency_up', { dependency: 'redis' })).toBe(0);
      expect(valueOf(hung, 'pos_dependency_up', { dependency: 'mongodb' })).toBe(1);
    } finally {
      process.kill(redisServer.process.pid!, 'SIGCONT');
    }
    await eventually(
      async () => valueOf(await scrape(), 'pos_redis_memory_used_bytes', { node }) !== undefined,
      'the gauge back',
      10_000,
    );
    await eventually(async () => valueOf(await scrape(), 'pos_ready') === 1, 'ready again', 10_000);
    expect(valueOf(await scrape(), 'pos_dependency_up', { dependency: 'redis' })).toBe(1);
  });
});

describe('queue wait on /metrics', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let worker: ChildRole | undefined;
  beforeAll(async () => {
    // no worker: jobs wait; their requests answer 503 soon
    stack = await startStack({ JOB_TIMEOUT: '300ms', QUEUE_PARTITIONS: '2' }, { worker: false });
  });
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
  });

  const oldest = async () => valueOf(parseMetrics(await metricsText(stack.origin)), 'pos_queue_oldest_waiting_seconds');

  it('reports how long the oldest waiting job has waited, not a later one, and 0 once none waits', async () => {
    expect(await oldest()).toBe(0);
    const loc = await stack.admin.createLocation('Queue wait');
    const key = (await stack.admin.createServiceSession(loc.id, 'reg-q')).apiKey;
    const orders = [
      await stack.admin.createOrder(loc.id, sampleRows),
      await stack.admin.createOrder(loc.id, sampleRows),
    ];
    const update = async (number: number) =>
      expect((await statusUpdate(stack.baseUrl, key, number, 'COMPLETED')).status).toBe(503);
    const queuedAt = Date.now();
    await update(orders[0]!.number);
    await eventually(async () => ((await oldest()) ?? 0) >= 1, 'the first job waiting a second', 10_000);
    // a job queued now does not make the oldest wait look shorter
    await update(orders[1]!.number);
    const waited = (await oldest())!;
    expect(waited).toBeGreaterThanOrEqual(1);
    expect(waited).toBeLessThanOrEqual((Date.now() - queuedAt) / 1000 + 0.1);

    worker = await spawnRole('worker', stack.env);
    await eventually(async () => (await oldest()) === 0, 'no job waiting once a worker runs', 20_000);
  });
});
