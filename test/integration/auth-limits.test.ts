/**
 * What rejected keys cost a node: a short memory of refused key hashes (no MongoDB read for a
 * repeated bad key), a bound on rejections held in their 401 delay at once (a 429 beyond), and
 * a delay that ends when the client hangs up. The 401s themselves are as the interface says.
 * (Made-up keys cost no read at all: api-key-mac.test.ts.)
 */
import { generateApiKey, hashApiKey } from '@pos/shared/auth/keys';
import { openDb } from '../support/fixtures';
import { adminHeader, call, sampleRows } from '../support/http';
import { useStack } from '../support/stack';
import { eventually } from '../support/wait';

describe('rejected keys', () => {
  const stack = useStack({ API_KEY_MAX_REJECTIONS: '1' });
  let url: string;
  /**
   * A key signed under the deployment's secret, as every key it issues is, that it never issued (so it is looked up).
   */
  const unknownKey = () => generateApiKey(stack.env.API_KEY_SECRET!);

  beforeAll(async () => {
    url = `${stack.baseUrl}/orders/location`;
  });

  /** The sum of rejected requests' durations recorded at or under `le` seconds. */
  const rejectedWithin = async (le: number) => {
    const { values } = await stack.api.deps.metrics.httpDuration.get();
    const bucket = values.find((v) => {
      const labels = v.labels as Record<string, string | number>;
      return (
        v.metricName === 'pos_http_request_duration_seconds_bucket' &&
        labels.le === le &&
        labels.status === '401' &&
        labels.route === '/api/v1/orders/location'
      );
    });
    return bucket?.value ?? 0;
  };

  it('answers one rejection at a time with the 401 after its delay, the others in the meantime with a 429', async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => call('GET', url, { apiKey: unknownKey() })));
    const statuses = answers.map((res) => res.status);
    expect(statuses).toContain(401);
    expect(statuses).toContain(429);
    for (const res of answers) {
      if (res.status === 401) {
        expect(res.text).toBe('{"error":"Session not valid"}');
        expect(res.ms).toBeGreaterThanOrEqual(500);
      } else {
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toBe('1');
        expect(res.json()).toMatchObject({ title: 'Too many requests', status: 429 });
      }
    }
  });

  it('ends the delay when the client hangs up, and gives its place to the next', async () => {
    const lookup = stack.api.deps.sessionLookup;
    const before = await rejectedWithin(0.5);
    const hangUp = new AbortController();
    const abandoned = fetch(url, { headers: { api_key: unknownKey() }, signal: hangUp.signal }).catch(() => 'hung up');
    await eventually(() => lookup.rejectionsInFlight === 1, 'the rejection in its delay');
    hangUp.abort();
    expect(await abandoned).toBe('hung up');
    await eventually(() => lookup.rejectionsInFlight === 0, 'its place given back');
    // its request ended well before the shortest delay (500 ms) would have
    await eventually(async () => (await rejectedWithin(0.5)) === before + 1, 'the hung-up request recorded');

    const next = await call('GET', url, { apiKey: unknownKey() });
    expect(next.status).toBe(401);
  });

  it('does not read MongoDB again for a key hash it refused a moment ago', async () => {
    const key = unknownKey();
    expect((await call('GET', url, { apiKey: key })).status).toBe(401);
    // The same hash stored now (as no issued key could be): the node still answers from memory.
    const db = await openDb(stack.env);
    try {
      const locationId = (await stack.admin.createLocation('Refused')).id;
      await db.db.collection('sessions').insertOne({
        _id: 'planted',
        type: 'SERVICE',
        locationId,
        keyHash: hashApiKey(key),
        createdAt: new Date(),
      } as never);
    } finally {
      await db.close();
    }
    const again = await call('GET', url, { apiKey: key });
    expect(again.status).toBe(401);
    expect(again.text).toBe('{"error":"Session not valid"}');

    // issued keys are unaffected
    const { id } = await stack.admin.createLocation('Issued');
    const { apiKey } = await stack.admin.createServiceSession(id, 'register');
    expect((await call('GET', url, { apiKey })).status).toBe(200);
  });
});

/**
 * A flood of bad keys costs the flooder its own 401 delays and nothing of anyone's capacity: a
 * rejected request leaves the node's requests in flight before its delay, so another location's
 * writes and an operator's reads are answered as without it.
 */
describe.each([
  ['the defaults', {}],
  ['HTTP_MAX_IN_FLIGHT=64', { HTTP_MAX_IN_FLIGHT: '64' }],
])('300 requests with made-up or revoked keys, at %s', (_name, env: Record<string, string>) => {
  const stack = useStack(env);

  it("take no other location's capacity: its customer's order and an operator's read are answered, not shed", async () => {
    const flooded = await stack.admin.createLocation('Flooded');
    const revoked = await stack.admin.createServiceSession(flooded.id, 'revoked');
    await stack.admin.closeSession(revoked.sessionId);
    const other = await stack.admin.createLocation('Other');
    const customer = await stack.admin.createCustomerSession(other.id, 1, 1);
    const inFlight = stack.api.deps.inFlight;

    const flood = Array.from({ length: 300 }, (_, i) =>
      call(
        'GET',
        `${stack.baseUrl}/orders/location${i % 2 ? `?api_key=pos_x${i}` : ''}`,
        i % 2 ? {} : { apiKey: revoked.apiKey },
      ),
    );
    // Most of them in their 401 delay (far more than HTTP_MAX_IN_FLIGHT=64), holding no place among
    // the requests in flight. Not all 300 at once: on a loaded machine the flood takes longer to
    // arrive than the shortest delay (500 ms), and the first ones are answered before the last come.
    const lookup = stack.api.deps.sessionLookup;
    await eventually(
      () => lookup.rejectionsInFlight >= 200 && inFlight.current === 0,
      'most bad keys in their 401 delay, none among the requests in flight',
      10_000,
      () => `${lookup.rejectionsInFlight} delayed, ${inFlight.current} in flight`,
    );
    const order = await call('POST', `${stack.baseUrl}/customer/orders`, {
      apiKey: customer.apiKey,
      body: { rows: sampleRows },
    });
    const listed = await call('GET', `${stack.operatorOrigin}/admin/v1/locations/${other.id}/orders?state=PLACED`, {
      headers: adminHeader(stack.env),
    });
    expect({ order: order.status, listed: listed.status }).toEqual({ order: 201, listed: 200 });

    const statuses = (await Promise.all(flood)).map((res) => res.status);
    expect(new Set(statuses)).toEqual(new Set([401]));
  });
});
