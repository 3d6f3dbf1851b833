import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { signalGroup } from '../../scripts/embedded/process-group';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { RunningWorker, startWorker } from '@pos/worker/worker';
import { call, sampleRows } from '../support/http';
import { descendantsOf, processAlive, startEmbedded } from '../support/process-groups';
import { openTransitionQueues } from '../support/queues';
import { ROOT, spawnRole, stackEnv } from '../support/stack';
import { eventually } from '../support/wait';

describe('shutdown and operations', () => {
  it('SIGTERM: the API stops taking work, finishes the in-flight request, and exits 0', async () => {
    const env = stackEnv({ JOB_TIMEOUT: '30s' });
    const api = await spawnRole('api', env);
    const origin = `http://127.0.0.1:${api.port}`;
    const admin = new AdminClient(origin, env.ADMIN_TOKEN!);
    const location = await admin.createLocation('Draining');
    const { apiKey } = await admin.createServiceSession(location.id, 'reg');
    const order = await admin.createOrder(location.id, sampleRows);

    // No worker yet: the update waits in the queue while the API is told to stop.
    const inFlight = call('PUT', `${origin}/api/v1/orders/${order.number}/statusupdate`, {
      apiKey,
      body: { newState: 'COMPLETED' },
    });
    const { queues, close } = openTransitionQueues(env);
    let worker: RunningWorker | undefined;
    try {
      await eventually(async () => (await queues.jobCounts('waiting')).waiting === 1, 'the update queued');
      api.process.kill('SIGTERM');
      await eventually(
        () =>
          fetch(`${origin}/healthz`).then(
            () => false,
            () => true,
          ),
        'the API to stop taking requests',
      );

      worker = await startWorker(loadConfig(env), createLogger('silent', 'test'));
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(res.json().state).toBe('COMPLETED');
      expect(await api.exited).toBe(0);
      expect(api.output()).toContain('"msg":"api stopped"');
    } finally {
      await worker?.close();
      await close();
    }
  });

  it('SIGTERM: the worker finishes and exits 0', async () => {
    const worker = await spawnRole('worker', stackEnv());
    expect(await worker.stop()).toBe(0);
    expect(worker.output()).toContain('"msg":"worker stopped"');
  });

  it('writes log lines in batches (LOG_FLUSH_INTERVAL), and every line waiting when it shuts down', async () => {
    // An interval long enough that no periodic write comes between the requests and the check.
    const api = await spawnRole('api', stackEnv({ LOG_FLUSH_INTERVAL: '4s' }));
    const origin = `http://127.0.0.1:${api.port}`;
    const accessLines = () =>
      api
        .output()
        .split('\n')
        .filter((line) => line.includes('"msg":"request"'));
    for (let i = 0; i < 3; i++) expect((await call('GET', `${origin}/healthz`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(accessLines()).toHaveLength(0); // waiting in the process, to be written with others
    expect(await api.stop()).toBe(0);
    expect(accessLines()).toHaveLength(3);
    expect(api.output()).toContain('"msg":"api stopped"');
  });

  it('health and readiness; keys and tokens never reach the log', async () => {
    const env = stackEnv();
    const api = await spawnRole('api', env);
    try {
      const origin = `http://127.0.0.1:${api.port}`;
      // the release and commit the node runs: the workspace's one version, and the checkout's commit
      const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
      const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim();
      expect((await call('GET', `${origin}/healthz`)).json()).toEqual({ status: 'ok', version, commit });
      expect(api.output().split('\n')[0]).toMatch(
        new RegExp(`"version":"${version}","commit":"${commit}".*"msg":"starting"`),
      );
      expect((await call('GET', `${origin}/readyz`)).json()).toEqual({ status: 'ready', mongo: 'ok', redis: 'ok' });

      const admin = new AdminClient(origin, env.ADMIN_TOKEN!);
      const location = await admin.createLocation('Secrets');
      const { apiKey } = await admin.createServiceSession(location.id, 'reg');
      await call('GET', `${origin}/api/v1/orders/location`, { apiKey });
      await call('GET', `${origin}/api/v1/orders/location?api_key=${apiKey}`);
      await call('GET', `${origin}/api/v1/orders/location?foo=1&api_key=${apiKey}x`);
      await call('GET', `${origin}/api/v1/nowhere?api_key=${apiKey}`);
      // the access lines of the eight requests above
      const accessLines = () =>
        api
          .output()
          .split('\n')
          .filter((line) => line.includes('"msg":"request"'));
      await eventually(() => accessLines().length >= 8, 'eight access lines');

      const log = api.output();
      expect(log).toContain('api_key=[REDACTED]');
      expect(log).not.toContain(apiKey);
      expect(log).not.toContain(apiKey.slice(4, 20));
      expect(log).not.toContain(env.ADMIN_TOKEN!);
      expect(log).not.toContain(env.API_KEY_SECRET!);
      const lines = log
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const requestLines = lines.filter((l) => l.msg === 'request');
      expect(requestLines.length).toBeGreaterThanOrEqual(8);
      for (const line of requestLines) expect(line.requestId).toEqual(expect.any(String));
    } finally {
      await api.stop();
    }
  });

  it('npm start runs the embedded default and serves the walk-through', async () => {
    const { child, output, exited } = startEmbedded(process.execPath, ['--require', 'tsx/cjs', 'scripts/start.ts']);
    try {
      const ready = () =>
        /POS ordering service ready at (http:\/\/localhost:\d+) \(admin token: (\S+)\)\n.*export POS=\1 POS_ADMIN=\1 ADMIN_TOKEN=\2\n/.exec(
          output(),
        );
      await eventually(
        () => ready() !== null,
        'the ready line',
        45_000,
        () => `output:\n${output()}`,
      );
      expect(output()).toContain('data is not kept');
      const [, origin, token] = ready()!;
      const admin = new AdminClient(origin!, token!);
      const location = await admin.createLocation('Walk-through');
      const { apiKey } = await admin.createServiceSession(location.id, 'register-1');
      const order = await admin.createOrder(location.id, sampleRows, 4);
      expect((await call('GET', `${origin}/api/v1/orders/location`, { apiKey })).json()).toEqual([order]);
      const done = await call('PUT', `${origin}/api/v1/orders/${order.number}/statusupdate`, {
        apiKey,
        body: { newState: 'COMPLETED' },
      });
      expect(done.json()).toMatchObject({ number: 1, state: 'COMPLETED' });
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      signalGroup(child, 'SIGKILL');
    }
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGKILL'] as const)(
    "npm start's embedded Redis and MongoDB end with it when its process group gets %s",
    async (signal) => {
      const { child, output, exited } = startEmbedded('npm', ['start']);
      try {
        await eventually(
          () => output().includes('POS ordering service ready at'),
          'the ready line',
          45_000,
          () => `output:\n${output()}`,
        );
        // in process groups of their own (a terminal's Ctrl-C reaches the launcher alone)
        const embedded = descendantsOf(child.pid!).filter((p) => /redis-server|jongodb/.test(p.command));
        expect(embedded.map((p) => (p.command.includes('redis-server') ? 'redis-server' : 'jongodb')).sort()).toEqual([
          'jongodb',
          'redis-server',
        ]);
        signalGroup(child, signal);
        await exited;
        await eventually(
          () => embedded.every((p) => !processAlive(p.pid)),
          'the embedded servers to end',
          15_000,
          () => JSON.stringify(embedded.filter((p) => processAlive(p.pid))),
        );
      } finally {
        signalGroup(child, 'SIGKILL');
      }
    },
  );
});
