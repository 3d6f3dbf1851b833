/**
 * Runs the service for a test file: in this process (fast) or as child processes (for
 * several API nodes and killed workers). Each stack gets its own database and Redis prefix.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { AdminClient } from '../../shared/src/clients/admin-client';
import { loadConfig } from '../../shared/src/config';
import { createLogger } from '../../shared/src/log';
import { RunningApi, startApi } from '../../services/api/src/server';
import { RunningWorker, startWorker } from '../../services/worker/src/worker';

export const ROOT = path.resolve(__dirname, '../..');

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
    ADMIN_TOKEN: `admin-${randomBytes(12).toString('hex')}`,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...overrides,
  };
}

export interface Stack {
  env: StackEnv;
  origin: string;
  baseUrl: string;
  admin: AdminClient;
  close(): Promise<void>;
}

/** API and worker in this process. */
export async function startStack(overrides: StackEnv = {}, options: { worker?: boolean } = {}): Promise<Stack & { api: RunningApi; worker?: RunningWorker }> {
  const env = stackEnv(overrides);
  const config = loadConfig(env);
  const log = createLogger(env.LOG_LEVEL!, 'test');
  const worker = options.worker === false ? undefined : await startWorker(config, log);
  const api = await startApi(config, log);
  const origin = `http://127.0.0.1:${api.port}`;
  return {
    env,
    api,
    worker,
    origin,
    baseUrl: `${origin}${config.basePath}`,
    admin: new AdminClient(origin, env.ADMIN_TOKEN!),
    async close() {
      await api.close();
      await worker?.close();
    },
  };
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

/** Starts `npm run start:api` / `start:worker` as a child and waits for its ready log line. */
export async function spawnRole(role: 'api' | 'worker', env: StackEnv): Promise<ChildRole & { port?: number }> {
  const entry = path.join(ROOT, 'services', role, 'src', 'main.ts');
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', entry], {
    cwd: ROOT,
    // The ready line is an info line, so children always log at info.
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  // 'close', not 'exit': it comes after the child's output has all been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const readyMessage = role === 'api' ? '"msg":"api listening"' : '"msg":"worker ready"';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${role} did not start:\n${output}`)), 30_000);
    const check = () => {
      if (output.includes(readyMessage)) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${role} exited (${code}) before it was ready:\n${output}`));
    });
  });
  const portMatch = /"msg":"api listening"/.test(output) ? /"port":(\d+)/.exec(output) : null;
  return {
    process: child,
    port: portMatch ? Number(portMatch[1]) : undefined,
    output: () => output,
    exited,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
