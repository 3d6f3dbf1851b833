/**
 * Opt-in rate limits (`RATE_LIMIT`): per API key, counted in Redis across API nodes, with the
 * RateLimit headers of draft-ietf-httpapi-ratelimit-headers; fail open when Redis is away.
 */
import Redis from 'ioredis';
import { loadConfig } from '@pos/shared/config';
import { RegisterClient } from '@pos/shared/clients/register/client';
import { createLogger } from '@pos/shared/log';
import { RunningApi, startApi } from '@pos/api/server';
import { registerAt } from '../support/fixtures';
import { adminHeader, call } from '../support/http';
import { spawnRole, startStack, useStack, stackEnv } from '../support/stack';
import { TcpProxy } from '../../scripts/embedded/tcp-proxy';
import { eventually, pause } from '../support/wait';

describe('RATE_LIMIT shared by two API nodes', () => {
  const stack = useStack({ RATE_LIMIT: '5/1m' });
  let other: RunningApi;

  beforeAll(async () => {
    other = await startApi(loadConfig(stack.env), createLogger('silent', 'test'));
  });
  afterAll(async () => {
    await other.close();
    await stack.close();
  });

  it('counts every request of a key on either node; the sixth is a 429 with Retry-After and the headers', async () => {
    const { location, key } = await registerAt(stack, 'Limited');
    const nodes = [stack.baseUrl, `http://127.0.0.1:${other.port}/api/v1`];
    for (let i = 0; i < 5; i++) {
      const answer = await call('GET', `${nodes[i % 2]}/orders/location`, { apiKey: key });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-policy')).toBe('"per-key";q=5;w=60');
      expect(answer.headers.get('ratelimit')).toMatch(new RegExp(`^"per-key";r=${4 - i};t=([1-9]|[1-5][0-9]|60)$`));
    }
    const limited = await call('GET', `${nodes[1]}/orders/location`, { apiKey: key });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(limited.json()).toMatchObject({
      status: 429,
      title: 'Too many requests',
      instance: '/api/v1/orders/location',
    });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit-policy')).toBe('"per-key";q=5;w=60');
    expect(limited.headers.get('ratelimit')).toBe(`"per-key";r=0;t=${retryAfter}`);
    // writes count too, on the other node
    expect((await call('DELETE', `${nodes[0]}/commands/1`, { apiKey: key })).status).toBe(429);

    // another key of the same location has its own quota
    const second = await stack.admin.createServiceSession(location.id, 'second');
    const theirs = await call('GET', `${nodes[0]}/orders/location`, { apiKey: second.apiKey });
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('ratelimit')).toMatch(/^"per-key";r=4;/);
  });

  it('the 401 path is not counted', async () => {
    const { location, key, sessionId } = await registerAt(stack, 'Rejected');
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).status).toBe(200);
    const session = await stack.admin.createServiceSession(location.id, 'soon-closed');
    await stack.admin.closeSession(session.sessionId);
    const rejected = await Promise.all(
      Array.from({ length: 8 }, () => call('GET', `${stack.baseUrl}/orders/location`, { apiKey: session.apiKey })),
    );
    expect(rejected.map((r) => r.status)).toEqual(Array(8).fill(401));
    expect(rejected.every((r) => r.headers.get('ratelimit') === null)).toBe(true);
    const redis = new Redis(stack.env.REDIS_URL!);
    try {
      // the counter of the key that was let in, and none for the one turned away
      expect(await redis.exists(`${stack.env.REDIS_PREFIX}:ratelimit:${sessionId}`)).toBe(1);
      expect(await redis.exists(`${stack.env.REDIS_PREFIX}:ratelimit:${session.sessionId}`)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it('without RATE_LIMIT nothing is limited and no header is sent', async () => {
    const plain = await startStack({}, { worker: false });
    try {
      const { key } = await registerAt(plain, 'Unlimited');
      for (let i = 0; i < 8; i++) {
        const answer = await call('GET', `${plain.baseUrl}/orders/location`, { apiKey: key });
        expect(answer.status).toBe(200);
        expect(answer.headers.get('ratelimit')).toBeNull();
      }
    } finally {
      await plain.close();
    }
  });
});

describe('the register client and a 429', () => {
  const stack = useStack({ RATE_LIMIT: '2/2s' }, { worker: false });

  it('waits Retry-After, then gets its answer', async () => {
    const { key } = await registerAt(stack, 'Patient');
    const waits: number[] = [];
    const client = new RegisterClient({
      baseUrl: stack.baseUrl,
      apiKey: key,
      // the waits the client asks for are what is tested: they are slept as asked
      sleep: (ms) => {
        waits.push(ms);
        return pause(ms);
      },
      // the random part of each wait at its highest: the ceiling itself
      random: () => 0.999,
    });
    for (let i = 0; i < 3; i++) expect(await client.listWork()).toEqual([]);
    expect(waits.length).toBeGreaterThanOrEqual(1);
    // whole seconds from Retry-After first, then the jitter on top: at most the first ceiling, 500 ms
    expect(waits.every((ms) => (ms >= 1000 && ms < 1500) || (ms >= 2000 && ms < 2500))).toBe(true);
  });
});

describe('the limiter with Redis unreachable', () => {
  it('lets requests through and logs, rather than turning the outage into 429s', async () => {
    const env = stackEnv({ RATE_LIMIT: '5/1m' });
    const proxy = await TcpProxy.start(env.REDIS_URL!);
    const api = await spawnRole('api', { ...env, REDIS_URL: proxy.url() });
    try {
      const admin = `http://127.0.0.1:${api.port}/admin/v1`;
      const auth = adminHeader(env);
      const location = (await call('POST', `${admin}/locations`, { headers: auth, body: { name: 'Outage' } })).json<{
        id: string;
      }>();
      const key = (
        await call('POST', `${admin}/locations/${location.id}/service-sessions`, {
          headers: auth,
          body: { deviceId: 'r' },
        })
      ).json<{ apiKey: string }>().apiKey;

      await proxy.cut();
      for (let i = 0; i < 8; i++) {
        const answer = await call('GET', `http://127.0.0.1:${api.port}/api/v1/orders/location`, { apiKey: key });
        expect(answer.status).toBe(200);
        expect(answer.headers.get('ratelimit')).toBeNull();
      }
      await eventually(
        () => api.output().includes('rate limiter unavailable; letting requests through'),
        'the outage logged',
      );
      expect(api.output().split('rate limiter unavailable').length - 1).toBe(1); // once, not per request
    } finally {
      await proxy.restore();
      await api.stop();
      await proxy.close();
    }
  });
});
