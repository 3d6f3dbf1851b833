/**
 * Keys carry a MAC under the deployment's API_KEY_SECRET (docs/security.md#api-keys), checked before any
 * lookup: a flood of distinct made-up keys costs MongoDB nothing, and still gets the interface's
 * text/plain 401 after its delay. Keys signed under a previous secret work while it is listed in
 * API_KEY_SECRET_PREVIOUS; unsigned keys of the shape issued before work only with
 * API_KEY_ACCEPT_UNSIGNED=1, are counted, and are replaced by a key rotation.
 */
import { randomBytes } from 'node:crypto';
import { API_KEY_SHAPE, generateApiKey, hashApiKey, isSignedKey } from '@pos/shared/auth/keys';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { newId } from '@pos/shared/store/ids';
import { spawnNode } from '../../scripts/embedded/spawn-role';
import { openDb, registerAt } from '../support/fixtures';
import { call, HttpResult } from '../support/http';
import { mongoCommandsFor, scrapeMetrics, valueOf } from '../support/metrics';
import { startStack, stackEnv, StackEnv } from '../support/stack';

const SESSION_NOT_VALID = '{"error":"Session not valid"}';

type TestStack = Awaited<ReturnType<typeof startStack>>;

const work = (stack: TestStack, apiKey: string) => call('GET', `${stack.baseUrl}/orders/location`, { apiKey });

function expectSessionNotValid(res: HttpResult): void {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain\b/);
  expect(res.text).toBe(SESSION_NOT_VALID);
  expect(res.ms).toBeGreaterThanOrEqual(500);
}

/** The node's count of requests with unsigned keys by outcome (undefined when it is not on /metrics). */
const unsignedRequests = async (stack: TestStack, outcome: 'accepted' | 'rejected') =>
  valueOf(await scrapeMetrics(stack.origin), 'pos_unsigned_key_requests_total', { outcome });

/** A secret for API_KEY_SECRET. */
const newSecret = () => `secret-${randomBytes(16).toString('hex')}`;

describe('a flood of made-up keys', () => {
  const FLOOD = 1000;
  let stack: TestStack;

  beforeAll(async () => {
    // Every rejection of the flood is held in its delay at once (no 429).
    stack = await startStack({ API_KEY_MAX_REJECTIONS: String(FLOOD + 10) }, { worker: false });
  });
  afterAll(() => stack?.close());

  it(`${FLOOD} distinct keys of the issued shape: each the text/plain 401 after its delay, and no MongoDB read`, async () => {
    const { key: issued } = await registerAt(stack, 'Flooded');
    // Made up in the very shape the service issues (its prefix, alphabet and length), never issued.
    const shape = new RegExp(`^pos_[A-Za-z0-9_-]{${issued.length - 4}}$`);
    const madeUp = () =>
      `pos_${randomBytes(issued.length)
        .toString('base64url')
        .slice(0, issued.length - 4)}`;
    const keys = Array.from({ length: FLOOD }, madeUp);
    expect(new Set(keys).size).toBe(FLOOD);
    for (const key of keys) expect(key).toMatch(shape);

    let answers: HttpResult[] = [];
    const reads = await mongoCommandsFor(stack.origin, async () => {
      answers = await Promise.all(keys.map((apiKey) => work(stack, apiKey)));
    });
    for (const res of answers) expectSessionNotValid(res);
    expect(reads).toBeLessThanOrEqual(2);
    // the issued key still opens its session
    expect((await work(stack, issued)).status).toBe(200);
  });

  it('a real key with one character changed, or signed under another secret, costs no read either', async () => {
    const { key } = await registerAt(stack, 'Tampered');
    const at = 10;
    const tampered = `${key.slice(0, at)}${key[at] === 'A' ? 'B' : 'A'}${key.slice(at + 1)}`;
    const foreign = generateApiKey(newSecret());
    const reads = await mongoCommandsFor(stack.origin, async () => {
      for (const res of await Promise.all([work(stack, tampered), work(stack, foreign)])) expectSessionNotValid(res);
    });
    expect(reads).toBe(0);
  });

  it('the API refuses to start without API_KEY_SECRET', async () => {
    await expect(startStack({ API_KEY_SECRET: '' }, { worker: false })).rejects.toThrow(
      /API_KEY_SECRET must be set for the API/,
    );
  });
});

describe('rotating the secret: keys signed under a previous secret', () => {
  it('work while it is in API_KEY_SECRET_PREVIOUS, and stop (text/plain 401, no read) once it is dropped', async () => {
    const old = newSecret();
    const current = newSecret();
    // one deployment (database, prefix, token) through three configurations
    let stack = await startStack({ API_KEY_SECRET: old }, { worker: false });
    const deployment: StackEnv = { ...stack.env };
    delete deployment.API_KEY_SECRET;
    let kept: string;
    let rotated: string;
    try {
      ({ key: kept } = await registerAt(stack, 'Kept'));
      const { key, sessionId } = await registerAt(stack, 'Rotated');
      expect(isSignedKey(kept, [old])).toBe(true);
      await stack.close();

      // the new secret signs; the old one is still accepted
      stack = await startStack(
        { ...deployment, API_KEY_SECRET: current, API_KEY_SECRET_PREVIOUS: old },
        { worker: false },
      );
      expect((await work(stack, kept)).status).toBe(200);
      expect((await work(stack, key)).status).toBe(200);
      rotated = (await stack.admin.rotateKey(sessionId)).apiKey;
      expect(rotated).toMatch(API_KEY_SHAPE);
      expect(isSignedKey(rotated, [current])).toBe(true);
      expect(isSignedKey(rotated, [old])).toBe(false);
      expect((await work(stack, rotated)).status).toBe(200);
      const fresh = await registerAt(stack, 'Fresh');
      expect(isSignedKey(fresh.key, [current])).toBe(true);
      await stack.close();

      // the old secret dropped: its keys are made up now, whatever their sessions
      stack = await startStack({ ...deployment, API_KEY_SECRET: current }, { worker: false });
      const reads = await mongoCommandsFor(stack.origin, async () => {
        expectSessionNotValid(await work(stack, kept));
        expectSessionNotValid(await work(stack, key));
      });
      expect(reads).toBe(0);
      expect((await work(stack, rotated)).status).toBe(200);
      expect((await work(stack, fresh.key)).status).toBe(200);
    } finally {
      await stack.close();
    }
  });
});

describe('migrating the unsigned keys issued before (API_KEY_ACCEPT_UNSIGNED)', () => {
  it('they work only with the flag, are counted, and are replaced by a key rotation', async () => {
    let stack = await startStack({}, { worker: false });
    const deployment: StackEnv = { ...stack.env };
    // A session of the earlier release: its key had 32 random bytes and no MAC (stored as the release stored it).
    const unsigned = `pos_${randomBytes(32).toString('base64url')}`;
    expect(unsigned).toHaveLength(4 + 43);
    const location = await stack.admin.createLocation('Before signing');
    const sessionId = newId();
    const db = await openDb(stack.env);
    try {
      await db.db.collection('sessions').insertOne({
        _id: sessionId,
        type: 'SERVICE',
        locationId: location.id,
        deviceId: 'old-register',
        keyHash: hashApiKey(unsigned),
        createdAt: new Date(),
      } as never);
    } finally {
      await db.close();
    }
    const madeUpUnsigned = `pos_${randomBytes(32).toString('base64url')}`;
    try {
      // flag off (the default): refused without a read, and counted
      expect(await unsignedRequests(stack, 'accepted')).toBe(0);
      let reads = await mongoCommandsFor(stack.origin, async () => {
        expectSessionNotValid(await work(stack, unsigned));
        expectSessionNotValid(await work(stack, madeUpUnsigned));
      });
      expect(reads).toBe(0);
      expect(await unsignedRequests(stack, 'rejected')).toBe(2);
      expect(await unsignedRequests(stack, 'accepted')).toBe(0);
      await stack.close();

      // flag on: looked up as before (a made-up one costs its read), and counted by outcome
      stack = await startStack({ ...deployment, API_KEY_ACCEPT_UNSIGNED: '1' }, { worker: false });
      expect((await work(stack, unsigned)).status).toBe(200);
      reads = await mongoCommandsFor(stack.origin, async () =>
        expectSessionNotValid(await work(stack, madeUpUnsigned)),
      );
      expect(reads).toBe(1);
      expect(await unsignedRequests(stack, 'accepted')).toBe(1);
      expect(await unsignedRequests(stack, 'rejected')).toBe(1);

      // the session's key rotated: a signed key, and the unsigned one for its grace
      const rotated = await stack.admin.rotateKey(sessionId);
      expect(rotated.apiKey).toMatch(API_KEY_SHAPE);
      expect(isSignedKey(rotated.apiKey, [deployment.API_KEY_SECRET!])).toBe(true);
      expect((await work(stack, rotated.apiKey)).status).toBe(200);
      expect((await work(stack, unsigned)).status).toBe(200);
      expect(await unsignedRequests(stack, 'accepted')).toBe(2);
      await stack.close();

      // flag off again: the unsigned key is refused, the rotated one works
      stack = await startStack({ ...deployment }, { worker: false });
      expectSessionNotValid(await work(stack, unsigned));
      expect((await work(stack, rotated.apiKey)).status).toBe(200);
      expect(await unsignedRequests(stack, 'rejected')).toBe(1);
    } finally {
      await stack.close();
    }
  });
});

describe('npm start without API_KEY_SECRET, on a persistent MONGO_URL', () => {
  it('generates one for the run and says that its keys do not survive a restart; they do not', async () => {
    // The run's MongoDB and Redis, as an operator's would be; the secret unset ('' is unset).
    const env: StackEnv = { ...stackEnv({ LOG_LEVEL: 'warn' }), API_KEY_SECRET: '' };
    const start = async () => {
      const node = await spawnNode({
        name: 'npm start',
        entry: 'scripts/start.ts',
        env,
        ready: /POS ordering service ready at http:\/\/localhost:(\d+)/,
      });
      return { node, origin: `http://127.0.0.1:${node.ready[1]}` };
    };
    const stop = async ({ node }: Awaited<ReturnType<typeof start>>) => {
      node.process.kill('SIGTERM');
      expect(await node.exited).toBe(0);
    };
    let running = await start();
    try {
      expect(running.node.output()).toContain(
        'no API_KEY_SECRET: generated one for this run; the API keys issued now stop working when the service restarts',
      );
      const admin = new AdminClient(running.origin, env.ADMIN_TOKEN!);
      const location = await admin.createLocation('Embedded');
      const { apiKey } = await admin.createServiceSession(location.id, 'register');
      expect((await call('GET', `${running.origin}/api/v1/orders/location`, { apiKey })).status).toBe(200);
      await stop(running);

      running = await start();
      expectSessionNotValid(await call('GET', `${running.origin}/api/v1/orders/location`, { apiKey }));
    } finally {
      await stop(running);
    }
  });
});
