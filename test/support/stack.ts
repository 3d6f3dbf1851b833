/**
 * Runs the service for a test file: in this process (fast) or as child processes (for
 * several API nodes and killed workers). Each stack gets its own database and Redis prefix.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { RunningApi, startApi } from '@pos/api/server';
import { RunningWorker, startWorker } from '@pos/worker/worker';
import { Role, ROLE_READY, roleEntry, spawnNode } from '../../scripts/embedded/spawn-role';
import { signalGroup } from '../../scripts/embedded/process-group';
import { serviceAt } from './contract';
import { adminTokenAt } from './metrics';

export { ROOT } from '../../scripts/embedded/spawn-role';

export interface StackEnv {
  [name: string]: string;
}

/** The environment of one isolated deployment on the test run's Redis and MongoDB. */
export function stackEnv(overrides: StackEnv = {}): StackEnv {
  const id = `t${randomBytes(5).toString('hex')}`;
  return {
    MONGO_URL: process.env.TEST_MONGO_URL!,
    REDIS_URL: process.env.TEST_REDIS_URL!,
    MONGO_DB: id,
    REDIS_PREFIX: id,
    ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`,
    API_KEY_SECRET: `keys-${randomBytes(16).toString('hex')}`,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...overrides,
  };
}

export interface Stack {
  env: StackEnv;
  /** The register-facing listener (PORT). */
  origin: string;
  /** The operator listener: ADMIN_PORT when the stack sets it, else the same as `origin`. */
  operatorOrigin: string;
  baseUrl: string;
  admin: AdminClient;
  close(): Promise<void>;
}

/** API and worker in this process. */
export async function startStack(
  overrides: StackEnv = {},
  options: { worker?: boolean } = {},
): Promise<Stack & { api: RunningApi; worker?: RunningWorker }> {
  const env = stackEnv(overrides);
  const config = loadConfig(env);
  const log = createLogger(env.LOG_LEVEL!, 'test');
  const worker = options.worker === false ? undefined : await startWorker(config, log);
  // A worker already started must not outlive an API that failed to start.
  const api = await startApi(config, log).catch(async (err: unknown) => {
    await worker?.close();
    throw err;
  });
  const origin = `http://127.0.0.1:${api.port}`;
  const operatorOrigin = api.adminPort === undefined ? origin : `http://127.0.0.1:${api.adminPort}`;
  serviceAt(origin);
  if (operatorOrigin !== origin) serviceAt(operatorOrigin);
  for (const at of [origin, operatorOrigin]) adminTokenAt(at, env.ADMIN_TOKEN);
  return {
    env,
    api,
    worker,
    origin,
    operatorOrigin,
    baseUrl: `${origin}${config.http.basePath}`,
    admin: new AdminClient(operatorOrigin, env.ADMIN_TOKEN!),
    async close() {
      await api.close();
      await worker?.close();
    },
  };
}

export type StartedStack = Awaited<ReturnType<typeof startStack>>;

/**
 * A resource that lives as long as the tests of the enclosing `describe` (or file): made before
 * them, closed after them. What it returns stands for the resource (a Proxy: its properties are
 * read from it once it is made); read before then, outside a test or a hook, it throws.
 */
export function useBeforeAll<T extends object>(what: string, make: () => Promise<T>, close: (made: T) => unknown): T {
  let made: T | undefined;
  beforeAll(async () => {
    made = await make();
  });
  afterAll(() => made && close(made));
  return new Proxy({} as T, {
    get(_target, key) {
      if (!made) throw new Error(`${what} was read (${String(key)}) before it was made: read it in a test or a hook`);
      return Reflect.get(made, key);
    },
  });
}

/**
 * The one lifecycle of a test file's stack (useBeforeAll). A file that restarts its stack, or
 * starts it from what another hook made, keeps a `let stack` of its own.
 */
export function useStack(overrides: StackEnv = {}, options: { worker?: boolean } = {}): StartedStack {
  return useBeforeAll(
    'the stack',
    () => startStack(overrides, options),
    (stack) => stack.close(),
  );
}

export interface ChildRole {
  process: ChildProcess;
  /** Everything the child has written, for assertions on its log lines. */
  output(): string;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

/**
 * Starts a role (`services/<role>/src/main.ts`) as a child and waits for its ready log line; from
 * this checkout, or from `root`, another release's (test/support/release.ts).
 */
export async function spawnRole(
  role: Role,
  env: StackEnv,
  options: { mayDieFirst?: boolean; root?: string } = {},
): Promise<ChildRole & { port?: number }> {
  const child = await spawnNode({
    name: role,
    entry: roleEntry(role),
    root: options.root,
    // The ready line is an info line, so children always log at info; and each line at once,
    // since tests read them as they happen (shutdown.test.ts checks the batched default).
    env: { LOG_FLUSH_INTERVAL: '0ms', ...env, LOG_LEVEL: 'info' },
    ready: ROLE_READY[role],
    mayDieFirst: options.mayDieFirst,
  });
  const { process: proc, exited } = child;
  if (role === 'api') {
    serviceAt(`http://127.0.0.1:${child.ready[1]}`);
    adminTokenAt(`http://127.0.0.1:${child.ready[1]}`, env.ADMIN_TOKEN);
  }
  return {
    process: proc,
    port: role === 'api' ? Number(child.ready[1]) : undefined,
    output: child.output,
    exited,
    // SIGTERM to the role alone, as a deployment would; whatever of its group is left ends with it
    async stop() {
      proc.kill('SIGTERM');
      const code = await exited;
      signalGroup(proc, 'SIGKILL');
      return code;
    },
    async kill() {
      signalGroup(proc, 'SIGKILL');
      await exited;
    },
  };
}
