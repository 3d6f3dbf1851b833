/**
 * The docs' shell examples run as written (test/support/doc-examples.ts says how they are marked):
 * `npm start`, as the README says, with its printed `export` line in the shell, then every
 * example of README.md and docs/ in the order a reader meets them. An example that stops working
 * fails here, naming its file and line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, spawnNode, type NodeChild } from '../../scripts/embedded/spawn-role';
import { signalGroup } from '../../scripts/embedded/process-group';
import { allExamples, expectedStatuses, scriptOf } from '../support/doc-examples';
import { runToEnd } from '../support/process-groups';
import { stackEnv } from '../support/stack';

describe('the docs run as written', () => {
  const examples = allExamples(ROOT);
  let service: NodeChild;
  let exported: string;

  beforeAll(async () => {
    // the service as `npm start` runs it (on the test's Redis and MongoDB), with the webhooks' local try-out allowed
    const env = { ...stackEnv({ LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: '1' }), ADMIN_TOKEN: '' };
    service = await spawnNode({
      name: 'npm start',
      entry: 'scripts/start.ts',
      env,
      ready: /^For the tour.*: (export POS=.*)$/m,
      timeoutMs: 60_000,
    });
    exported = service.ready[1]!;
  }, 90_000);
  afterAll(async () => {
    service?.process.kill('SIGTERM');
    await service?.exited;
    if (service) signalGroup(service.process, 'SIGKILL');
  });

  it('marks every example it does not run with a reason', () => {
    expect(examples.length).toBeGreaterThan(10);
    for (const example of examples.filter((e) => e.mode === 'skip')) expect(example.reason!.length).toBeGreaterThan(10);
  });

  it('runs every other example, in order, in one shell: each succeeds, and each HTTP error is one its example names', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-examples-'));
    const script = path.join(dir, 'examples.sh');
    fs.writeFileSync(script, `${exported}\n${scriptOf(examples, dir)}`);
    // a group of its own: the examples it leaves running (a receiver under npm, sh, tsx and node) end with it
    const {
      code,
      out: stdout,
      err: stderr,
    } = await runToEnd('bash', [script], {
      cwd: ROOT,
      env: { ...process.env, ADMIN_TOKEN: '', POS_URL: '', POS_ADMIN_TOKEN: '' },
      timeoutMs: 230_000,
    });

    const current = [...stderr.matchAll(/^::example (.+)$/gm)].at(-1)?.[1];
    const context = `last example started: ${current}\n--- stderr (end) ---\n${stderr.slice(-3000)}\n--- stdout (end) ---\n${stdout.slice(-2000)}`;
    if (code !== 0 || !stderr.includes('::done')) throw new Error(`an example failed (exit ${code})\n${context}`);

    // each example's HTTP statuses against what it names
    const byExample = stderr.split(/^::example /m).slice(1);
    for (const part of byExample) {
      const where = part.slice(0, part.indexOf('\n'));
      const example = examples.find((e) => `${e.file}:${e.line}` === where)!;
      const allowed = expectedStatuses(example.code);
      for (const [, status] of part.matchAll(/^::status (\d+)$/gm)) {
        const n = Number(status);
        if (n >= 400 && !allowed.has(n))
          throw new Error(`${where}: an HTTP ${n} its example does not name\n${context}`);
      }
    }
  }, 240_000);
});
