/**
 * A dependency that hangs (its process stopped with SIGSTOP: connections stay open, nothing is
 * answered) costs a caller at most JOB_TIMEOUT and a margin, never a hang (docs/failure-modes.md).
 * Each answer says what is known, and once the dependency is back (SIGCONT) what was applied
 * matches it. Each test runs the service in this process on a redis-server or a MongoDB stand-in
 * of its own, never the run's.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { generateApiKey } from '@pos/shared/auth/keys';
import type { ChildServer } from '../../scripts/embedded/child-server';
import { startJongodb } from '../../scripts/embedded/jongodb';
import { startRedisServer } from '../../scripts/embedded/redis-server';
import { openDb, registerAt } from '../support/fixtures';
import { adminHeader, call, HttpResult, sampleRows } from '../support/http';
import { TestStream } from '../support/sse-client';
import { startStack } from '../support/stack';
import { eventually } from '../support/wait';

const JOB_TIMEOUT_MS = 3_000;
/** Every answer comes within this: JOB_TIMEOUT, the margin of a second, and slack for a loaded machine. */
const BOUND_MS = JOB_TIMEOUT_MS + 2_000;
/** A request still unanswered after this has hung: it fails the test rather than outlive it. */
const GIVE_UP_MS = 20_000;
const UUID = '[0-9a-f-]{36}';
/** A key signed as the stack's are, that no session has: it passes its MAC and is looked up in MongoDB. */
const unissuedKey = (stack: { env: Record<string, string> }) => generateApiKey(stack.env.API_KEY_SECRET!);

type Stack = Awaited<ReturnType<typeof startStack>>;

/** Stops the server and returns once the kernel shows every thread of it stopped. */
async function hang(server: ChildServer): Promise<void> {
  const pid = server.process.pid!;
  process.kill(pid, 'SIGSTOP');
  // A thread's state follows its name's closing parenthesis; a thread gone meanwhile counts as stopped.
  const stopped = (tid: string) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return stat[stat.lastIndexOf(')') + 2] === 'T';
    } catch {
      return true;
    }
  };
  await eventually(() => fs.readdirSync(`/proc/${pid}/task`).every(stopped), `process ${pid} stopped`, 5_000);
}
const resume = (server: ChildServer) => process.kill(server.process.pid!, 'SIGCONT');

/** A request's answer as the tests read it: status, Retry-After, the problem's detail, and how long it took. */
interface Answer {
  status: number;
  retryAfter: string | null;
  detail: string | undefined;
  text: string;
  ms: number;
}

function answerOf(res: HttpResult): Answer {
  let detail: string | undefined;
  try {
    detail = res.json<{ detail?: string }>().detail;
  } catch {
    detail = undefined;
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), detail, text: res.text, ms: res.ms };
}

async function request(method: string, url: string, options: Parameters<typeof call>[2] = {}): Promise<Answer> {
  return answerOf(await call(method, url, { ...options, timeoutMs: GIVE_UP_MS }));
}

/** Opens an event stream and reads its answer: the head's status, and a refusal's problem in full. */
async function openStream(url: string, apiKey: string): Promise<Answer & { stream: TestStream }> {
  const started = Date.now();
  const { stream, opened } = TestStream.start(url, { apiKey });
  const timer = setTimeout(() => stream.close(), GIVE_UP_MS);
  try {
    await opened;
    const ms = Date.now() - started;
    if (stream.status !== 200) await stream.end(GIVE_UP_MS);
    let detail: string | undefined;
    if (stream.status !== 200) detail = (JSON.parse(stream.raw) as { detail?: string }).detail;
    return {
      status: stream.status,
      retryAfter: (stream.headers['retry-after'] as string | undefined) ?? null,
      detail,
      text: stream.raw,
      ms,
      stream,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** What a 503 check compares; any other answer shows its body and time too. */
function seen(what: string, answer: Answer) {
  const { status, retryAfter, text, ms } = answer;
  return status === 503 ? { what, status, retryAfter } : { what, status, retryAfter, text, ms };
}

/** Answered in time with a 503 and Retry-After. */
function expectUnavailable(answer: Answer, what: string): void {
  expect(seen(what, answer)).toEqual({ what, status: 503, retryAfter: '1' });
  expect(answer.ms).toBeLessThan(BOUND_MS);
}

/** The transition queue holds nothing waiting, running or delayed: the worker has caught up. */
async function workerCaughtUp(stack: Stack): Promise<void> {
  await eventually(
    async () => {
      const counts = await stack.api.deps.queues.jobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    },
    'the worker to catch up',
    15_000,
  );
}

const keyed = (key: string) => ({ 'Idempotency-Key': key });

describe('Redis hangs', () => {
  let redis: ChildServer;
  let stack: Stack;

  beforeAll(async () => {
    redis = await startRedisServer();
    stack = await startStack({
      REDIS_URL: redis.url,
      JOB_TIMEOUT: `${JOB_TIMEOUT_MS}ms`,
      REDIS_COMMAND_TIMEOUT: '2s',
      RATE_LIMIT: '1000/1m',
    });
  });
  afterAll(async () => {
    resume(redis);
    await stack?.close();
    await redis?.stop();
  });

  it('polls answer 200 from MongoDB at once; writes and streams 503 saying what is known, and that is what happens', async () => {
    const { key, location } = await registerAt(stack, 'Redis hangs');
    const keyedOrder = await stack.admin.createOrder(location.id, sampleRows);
    const unkeyedOrder = await stack.admin.createOrder(location.id, sampleRows);
    // a location without streams on the node: its stream has to subscribe
    const quiet = await registerAt(stack, 'Quiet');
    const poll = () => request('GET', `${stack.baseUrl}/orders/location`, { apiKey: key });
    expect((await poll()).status).toBe(200);
    const reportKey = randomUUID();
    const adminKey = randomUUID();
    const auth = adminHeader(stack.env);
    const report = () =>
      request('POST', `${stack.baseUrl}/orders/${keyedOrder.number}/failure`, {
        apiKey: key,
        headers: keyed(reportKey),
        body: { reason: 'jam' },
      });
    const adminCreate = () =>
      request('POST', `${stack.origin}/admin/v1/locations/${location.id}/orders`, {
        headers: { ...auth, ...keyed(adminKey) },
        body: { rows: sampleRows },
      });

    await hang(redis);
    try {
      // The first poll may wait for the rate limiter's count once; from then on none waits for Redis.
      const first = await poll();
      expect(first.status).toBe(200);
      expect(first.ms).toBeLessThan(BOUND_MS);
      for (let i = 0; i < 5; i++) {
        const again = await poll();
        expect(again.status).toBe(200);
        // REDIS_COMMAND_TIMEOUT is 2 s: a poll that waited for Redis takes that long at least
        expect(again.ms).toBeLessThan(2_000);
        expect(again.text).toBe(first.text);
      }

      const [keyedWrite, unkeyedWrite, adminWrite, adminUnkeyed, unknownKey, stream, board] = await Promise.all([
        report(),
        request('PUT', `${stack.baseUrl}/orders/${unkeyedOrder.number}/statusupdate`, {
          apiKey: key,
          body: { newState: 'COMPLETED' },
        }),
        adminCreate(),
        request('POST', `${stack.origin}/admin/v1/locations/${location.id}/orders`, {
          headers: auth,
          body: { rows: sampleRows },
        }),
        request('GET', `${stack.baseUrl}/orders/location`, { apiKey: unissuedKey(stack) }),
        openStream(`${stack.baseUrl}/notifications/service/stream`, quiet.key),
        request(
          'GET',
          `${stack.origin}/admin/queues/api/queues?activeQueue=order-work&status=latest&page=1&jobsPerPage=10`,
          { headers: auth },
        ),
      ]);

      // With a key: its record could not be claimed, so nothing of it ran.
      for (const [what, answer] of [
        ['keyed write', keyedWrite],
        ['keyed admin write', adminWrite],
      ] as const) {
        expectUnavailable(answer, what);
        expect(answer.detail).toMatch(/was not processed/);
        expect(answer.detail).toMatch(/nothing of this attempt will be applied/);
        expect(answer.detail).toMatch(/retry it with the same Idempotency-Key/);
      }
      // Without one, its job was sent to a Redis that did not confirm it: it may be queued yet.
      expectUnavailable(unkeyedWrite, 'unkeyed write');
      expect(unkeyedWrite.detail).toMatch(/its outcome is unknown/);
      expect(unkeyedWrite.detail).toMatch(/it may still be applied/);
      expect(unkeyedWrite.detail).toMatch(/[Rr]ead the order before retrying/);
      // A counter order needs only MongoDB; its announcement is left to polls and stream replays.
      expect(adminUnkeyed.status).toBe(201);
      expect(adminUnkeyed.ms).toBeLessThan(BOUND_MS);
      // An unknown key is told so (MongoDB answers), after the interface's delay.
      expect(unknownKey.status).toBe(401);
      expect(unknownKey.ms).toBeLessThan(BOUND_MS);
      expectUnavailable(stream, 'stream open');
      expect(stream.detail).toBe('Redis did not answer in time');
      // The operators' queue board: a 503 too, not its own 500.
      expectUnavailable(board, 'Bull Board');
      expect(board.detail).toMatch(new RegExp(`^${UUID}: A backing service did not answer$`));
    } finally {
      resume(redis);
    }

    // What each answer said is what happened, once Redis is back and the worker has caught up.
    await workerCaughtUp(stack);
    const db = await openDb(stack.env);
    try {
      // The unkeyed job reached the queue when Redis woke, past its request's deadline: the worker
      // refused it (a write it had begun before the deadline could still have landed).
      expect(await db.order(location.id, unkeyedOrder.number)).toMatchObject({ state: 'PLACED', version: 0 });
      expect(await db.order(location.id, keyedOrder.number)).toMatchObject({ failureCount: 0, version: 0 });
      // The retries (same keys) are applied once each. The key's record may have been written when
      // Redis woke, and holds the key for its lock time: until then a retry is told to come back.
      const retried = async (send: () => Promise<Answer>, status: number): Promise<Answer> => {
        let last = await send();
        await eventually(
          async () => {
            if (last.status === status) return true;
            expect([409, 503]).toContain(last.status);
            last = await send();
            return last.status === status;
          },
          `a retry answered ${status}`,
          20_000,
        );
        return last;
      };
      await retried(report, 200);
      expect(await db.order(location.id, keyedOrder.number)).toMatchObject({ failureCount: 1, version: 1 });
      const created = await retried(adminCreate, 201);
      const replay = await adminCreate();
      expect(replay.text).toBe(created.text);
      const orders = await db.db.collection('orders').countDocuments({ locationId: location.id });
      expect(orders).toBe(4); // two before, the unkeyed counter order, and the keyed one once
    } finally {
      await db.close();
    }
  });
});

describe('MongoDB hangs', () => {
  let mongo: ChildServer;
  let stack: Stack;

  beforeAll(async () => {
    mongo = await startJongodb();
    stack = await startStack({ MONGO_URL: mongo.url, JOB_TIMEOUT: `${JOB_TIMEOUT_MS}ms`, MONGO_TIMEOUT: '1s' });
  });
  afterAll(async () => {
    resume(mongo);
    await stack?.close();
    await mongo?.stop();
  });

  it('every request answers 503 within JOB_TIMEOUT saying what is known, and that is what happens', async () => {
    const { key, location } = await registerAt(stack, 'MongoDB hangs');
    const keyedOrder = await stack.admin.createOrder(location.id, sampleRows);
    const unkeyedOrder = await stack.admin.createOrder(location.id, sampleRows);
    // The register's key is cached by the node: its requests need no session read.
    expect((await request('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).status).toBe(200);
    const updateKey = randomUUID();
    const adminKey = randomUUID();
    const auth = adminHeader(stack.env);
    const update = () =>
      request('PUT', `${stack.baseUrl}/orders/${keyedOrder.number}/statusupdate`, {
        apiKey: key,
        headers: keyed(updateKey),
        body: { newState: 'COMPLETED' },
      });
    const adminCreate = () =>
      request('POST', `${stack.origin}/admin/v1/locations/${location.id}/orders`, {
        headers: { ...auth, ...keyed(adminKey) },
        body: { rows: sampleRows },
      });

    await hang(mongo);
    try {
      const [keyedWrite, unkeyedWrite, poll, unknownKey, adminWrite, stream] = await Promise.all([
        update(),
        request('POST', `${stack.baseUrl}/orders/${unkeyedOrder.number}/failure`, { apiKey: key, body: {} }),
        request('GET', `${stack.baseUrl}/orders/location`, { apiKey: key }),
        request('GET', `${stack.baseUrl}/orders/location`, { apiKey: unissuedKey(stack) }),
        adminCreate(),
        openStream(`${stack.baseUrl}/notifications/service/stream`, key),
      ]);

      // Queued, and the worker could not finish by the deadline: the outcome is not known yet.
      expectUnavailable(keyedWrite, 'keyed write');
      expect(keyedWrite.detail).toMatch(/its outcome is unknown/);
      expect(keyedWrite.detail).toMatch(/retry it with the same Idempotency-Key/);
      expectUnavailable(unkeyedWrite, 'unkeyed write');
      expect(unkeyedWrite.detail).toMatch(/its outcome is unknown/);
      expect(unkeyedWrite.detail).toMatch(/it may still be applied/);
      expect(unkeyedWrite.detail).toMatch(/[Rr]ead the order before retrying/);
      // A read: retry it. Its detail carries the id of its log line.
      for (const [what, answer] of [
        ['poll', poll],
        ['unknown key', unknownKey],
        ['stream open', stream],
      ] as const) {
        expectUnavailable(answer, what);
        expect(answer.detail).toMatch(new RegExp(`^${UUID}: A backing service did not answer`));
      }
      // A write that MongoDB did not answer: done or not, nobody knows.
      expectUnavailable(adminWrite, 'admin write');
      expect(adminWrite.detail).toMatch(new RegExp(`^${UUID}: A backing service did not answer`));
      expect(adminWrite.detail).toMatch(/the outcome is unknown/);
      expect(adminWrite.detail).toMatch(/same Idempotency-Key/);
    } finally {
      resume(mongo);
    }

    await workerCaughtUp(stack);
    const db = await openDb(stack.env);
    try {
      // The unkeyed report's job read the order only once MongoDB woke, past its deadline: not applied.
      expect(await db.order(location.id, unkeyedOrder.number)).toMatchObject({
        state: 'PLACED',
        failureCount: 0,
        version: 0,
      });
      // The keyed update has no deadline: applied once MongoDB woke; its retry learns so, once.
      let retried = await update();
      for (let i = 0; i < 10 && retried.status === 503; i++) retried = await update();
      expect(retried.status).toBe(200);
      expect(JSON.parse(retried.text)).toMatchObject({ number: keyedOrder.number, state: 'COMPLETED' });
      expect(await db.order(location.id, keyedOrder.number)).toMatchObject({ state: 'COMPLETED', version: 1 });
      // The admin's create, retried with its key: one order, however far the first attempt got.
      const created = await adminCreate();
      expect(created.status).toBe(201);
      expect(await db.db.collection('orders').countDocuments({ locationId: location.id })).toBe(3);
    } finally {
      await db.close();
    }
  });
});

describe('a request whose calls outlast its deadline', () => {
  let mongo: ChildServer;
  let stack: Stack;
  // MONGO_TIMEOUT past JOB_TIMEOUT: only the request's own deadline answers it in time.
  const jobTimeoutMs = 2_000;

  beforeAll(async () => {
    mongo = await startJongodb();
    stack = await startStack({ MONGO_URL: mongo.url, JOB_TIMEOUT: `${jobTimeoutMs}ms`, MONGO_TIMEOUT: '15s' });
  });
  afterAll(async () => {
    resume(mongo);
    await stack?.close();
    await mongo?.stop();
  });

  it('is answered 503 by JOB_TIMEOUT and a margin; its handler finishes behind it; a live stream is never cut', async () => {
    const { key, location } = await registerAt(stack, 'Outlasted');
    expect((await request('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).status).toBe(200);
    const live = await TestStream.open(`${stack.baseUrl}/notifications/service/stream`, { apiKey: key });
    expect(live.status).toBe(200);
    const adminKey = randomUUID();
    const adminCreate = () =>
      request('POST', `${stack.origin}/admin/v1/locations/${location.id}/orders`, {
        headers: { ...adminHeader(stack.env), ...keyed(adminKey) },
        body: { rows: sampleRows },
      });

    await hang(mongo);
    try {
      const [poll, adminWrite] = await Promise.all([
        request('GET', `${stack.baseUrl}/orders/location`, { apiKey: key }),
        adminCreate(),
      ]);
      for (const [what, answer] of [
        ['poll', poll],
        ['admin write', adminWrite],
      ] as const) {
        expect(seen(what, answer)).toEqual({ what, status: 503, retryAfter: '1' });
        expect(answer.ms).toBeLessThan(jobTimeoutMs + 2_000);
      }
      expect(poll.detail).toBe('The request was not answered in time; retry it');
      expect(adminWrite.detail).toMatch(/its outcome is unknown: retry it with the same Idempotency-Key/);
      expect(live.isEnded).toBe(false);
    } finally {
      resume(mongo);
    }

    // The create went on once MongoDB woke: the live stream hears of its order, and the retry with
    // the key answers that very order.
    await live.waitFor(() => live.events.some((event) => event.event === 'order'), 'the created order', 15_000);
    const announced = live.events.find((event) => event.event === 'order')!.json<{ number: number }>();
    let created = await adminCreate();
    for (let i = 0; i < 20 && created.status === 409; i++) created = await adminCreate();
    expect(created.status).toBe(201);
    expect(JSON.parse(created.text)).toMatchObject({ number: announced.number });
    live.close();
  });
});
