/**
 * Rotating a session's key: the new key is shown once and works at once; the old one keeps
 * working for KEY_ROTATION_GRACE, then answers exactly like a revoked key (the text/plain 401),
 * on every request and for the streams it opened.
 */
import { Redis } from 'ioredis';
import { API_KEY_SHAPE } from '@pos/shared/auth/keys';
import { Announcer, redisPublisher } from '@pos/shared/events/announcements';
import { adminHeader, call, sampleRows } from '../support/http';
import { registerAt, useDb } from '../support/fixtures';
import { TestStream } from '../support/sse-client';
import { useStack } from '../support/stack';

const SESSION_NOT_VALID = '{"error":"Session not valid"}';

describe('key rotation (default grace)', () => {
  const stack = useStack();
  const db = useDb(stack);
  const work = (apiKey: string) => call('GET', `${stack.baseUrl}/orders/location`, { apiKey });
  /**
   * The grace ends, moved into the past rather than waited for. Like every writer of a session,
   * the test tells the nodes, which would otherwise judge their cached copy (and its grace).
   */
  const endGrace = async (sessionId: string) => {
    await db.db
      .collection('sessions')
      .updateOne({ _id: sessionId as never }, { $set: { previousKeyExpiresAt: new Date(Date.now() - 1) } });
    const redis = new Redis(stack.env.REDIS_URL!);
    try {
      await new Announcer(redisPublisher(redis), stack.env.REDIS_PREFIX!).sessionChanged(sessionId);
    } finally {
      redis.disconnect();
    }
  };
  const expectRevoked = async (apiKey: string) => {
    const res = await work(apiKey);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toBe(SESSION_NOT_VALID);
  };

  it('shows the new key once; both keys work during the grace; then the old one is a revoked key', async () => {
    const { location, key: oldKey, sessionId } = await registerAt(stack, 'Rotating');
    const before = Date.now();
    const rotated = await stack.admin.rotateKey(sessionId);
    expect(rotated).toMatchObject({
      sessionId,
      type: 'SERVICE',
      locationId: location.id,
      deviceId: 'register-Rotating',
    });
    expect(rotated.apiKey).toMatch(API_KEY_SHAPE);
    expect(rotated.apiKey).not.toBe(oldKey);
    const graceEnds = Date.parse(rotated.previousKeyExpiresAt);
    expect(graceEnds - Date.parse(rotated.keyRotatedAt)).toBe(10 * 60_000);
    expect(Date.parse(rotated.keyRotatedAt)).toBeGreaterThanOrEqual(before - 1000);

    expect((await work(rotated.apiKey)).status).toBe(200);
    expect((await work(oldKey)).status).toBe(200);
    // the session list shows the rotation, never a key
    const [listed] = await stack.admin.listSessions(location.id);
    expect(listed).toEqual({ ...rotated, apiKey: undefined });
    expect(JSON.stringify(listed)).not.toContain(rotated.apiKey.slice(4));

    await endGrace(sessionId);
    await expectRevoked(oldKey);
    expect((await work(rotated.apiKey)).status).toBe(200);
  });

  it('a second rotation ends the first old key at once; the second old key has its grace', async () => {
    const { key: first, sessionId } = await registerAt(stack, 'Twice');
    const second = (await stack.admin.rotateKey(sessionId)).apiKey;
    const third = (await stack.admin.rotateKey(sessionId)).apiKey;
    await expectRevoked(first);
    expect((await work(second)).status).toBe(200);
    expect((await work(third)).status).toBe(200);
  });

  it('a retired key on a closed session, and a closed or unknown session, are refused', async () => {
    const { key: oldKey, sessionId } = await registerAt(stack, 'Closing');
    const { apiKey: newKey } = await stack.admin.rotateKey(sessionId);
    await stack.admin.closeSession(sessionId);
    await expectRevoked(oldKey);
    await expectRevoked(newKey);

    const rotate = (id: string) =>
      call('POST', `${stack.origin}/admin/v1/sessions/${id}/rotate-key`, { headers: adminHeader(stack.env) });
    expect((await rotate(sessionId)).json()).toMatchObject({
      status: 409,
      title: 'Conflict',
      detail: 'Session is closed; its key cannot be rotated',
    });
    expect((await rotate('no-such-session')).json()).toMatchObject({ status: 404, detail: 'Session does not exist' });
    expect((await call('POST', `${stack.origin}/admin/v1/sessions/${sessionId}/rotate-key`)).status).toBe(401);
  });

  it('a rotated key of the wrong type is still the JSON 401, the retired one the text/plain 401', async () => {
    const location = await stack.admin.createLocation('Customer keys');
    const customer = await stack.admin.createCustomerSession(location.id, 7);
    const { apiKey } = await stack.admin.rotateKey(customer.sessionId);
    const res = await work(apiKey);
    expect(res.status).toBe(401);
    expect(res.text).toBe('{"message":"Unauthorized","uid":null}');
    await endGrace(customer.sessionId);
    await expectRevoked(customer.apiKey);
  });
});

describe('key rotation and the streams', () => {
  const stack = useStack({ KEY_ROTATION_GRACE: '1s' });

  it('a stream opened with the old key ends when its grace does; one opened with the new key goes on', async () => {
    const { location, key: oldKey, sessionId } = await registerAt(stack, 'Streams');
    const url = `${stack.baseUrl}/notifications/service/stream`;
    const oldStream = await TestStream.open(url, { apiKey: oldKey });
    expect(oldStream.status).toBe(200);
    const { apiKey: newKey } = await stack.admin.rotateKey(sessionId);
    const newStream = await TestStream.open(url, { apiKey: newKey });
    expect(newStream.status).toBe(200);
    try {
      await oldStream.end(10_000);
      expect(oldStream.isEnded).toBe(true);
      expect(newStream.isEnded).toBe(false);
      // the new key's stream is live: it gets the next order
      const order = await stack.admin.createOrder(location.id, sampleRows);
      const [event] = await newStream.eventCount(1, 10_000);
      expect(event!.json()).toEqual(order);
      // and the old key, asked again, is a revoked key
      const res = await call('GET', url, { apiKey: oldKey });
      expect(res.status).toBe(401);
      expect(res.text).toBe(SESSION_NOT_VALID);
    } finally {
      oldStream.close();
      newStream.close();
    }
  });
});
