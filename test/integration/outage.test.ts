import { startJongodb } from '../../scripts/embedded/jongodb';
import { startRedisServer } from '../../scripts/embedded/redis-server';
import { adminHeader, call, sampleRows, statusUpdate } from '../support/http';
import { registerAt } from '../support/fixtures';
import { startStack } from '../support/stack';

/** MongoDB or Redis going away answers 503 problems with Retry-After, never a hang or a crash. */
describe('backing services unreachable', () => {
  it('MongoDB down: requests and /readyz answer 503 with Retry-After', async () => {
    const mongo = await startJongodb();
    const stack = await startStack({ MONGO_URL: mongo.url });
    try {
      const { key } = await registerAt(stack);
      await mongo.stop();
      const res = await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.json()).toMatchObject({
        title: 'Service unavailable',
        detail: expect.stringMatching(/^[0-9a-f-]{36}: /),
      });
      const ready = await call('GET', `${stack.origin}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.json().detail).toMatch(/^MongoDB unreachable/);
      expect((await call('GET', `${stack.origin}/healthz`)).status).toBe(200);
    } finally {
      await stack.close();
    }
  });

  it('Redis down: a status update answers 503 "not queued" with Retry-After and changes nothing', async () => {
    const redis = await startRedisServer();
    const stack = await startStack({ REDIS_URL: redis.url, JOB_TIMEOUT: '1s', SHUTDOWN_GRACE: '2s' });
    try {
      const { key, location } = await registerAt(stack);
      const order = await stack.admin.createOrder(location.id, sampleRows);
      await redis.stop();
      expect((await call('GET', `${stack.origin}/readyz`)).json().detail).toMatch(/Redis unreachable/);
      // The node knows Redis is gone: it sends no job, and says so.
      const res = await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.json().detail).toMatch(/the request was not queued and nothing of it will be applied; retry it$/);
      const metrics = await call('GET', `${stack.origin}/metrics`, { headers: adminHeader(stack.env) });
      expect(metrics.status).toBe(200);
      expect(metrics.text).not.toMatch(/^pos_queue_jobs\{/m);
      const list = await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key });
      expect(list.json()).toEqual([order]);
    } finally {
      await stack.close();
    }
  });
});
