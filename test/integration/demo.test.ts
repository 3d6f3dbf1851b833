/**
 * `npm run demo` as a newcomer runs it: on the embedded default (its own redis-server and MongoDB
 * stand-in), customers ordering and a register serving over real HTTP; its printed stream and
 * Bull Board instructions work while it runs; it ends by itself after --rounds, and cleanly on Ctrl-C.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { signalGroup, spawnGroup } from '../../scripts/embedded/process-group';
import { serviceAt } from '../support/contract';
import { TestStream } from '../support/sse-client';
import { ROOT } from '../support/stack';
import { eventually } from '../support/wait';

interface DemoRun {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in the output. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

function runDemo(args: string[]): DemoRun {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'info' };
  // The embedded default: no external Redis or MongoDB, a generated admin token.
  for (const name of [
    'REDIS_URL',
    'MONGO_URL',
    'ADMIN_TOKEN',
    'API_KEY_SECRET',
    'MONGO_DB',
    'REDIS_PREFIX',
    'DEMO_ROUNDS',
    'DEMO_TABLES',
    'DEMO_PACE',
  ])
    delete env[name];
  // Its own process group, so that a signal to the group is what a terminal's Ctrl-C does.
  const child = spawnGroup(process.execPath, ['--require', 'tsx/cjs', path.join(ROOT, 'scripts', 'demo.ts'), ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const onData = (chunk: Buffer) => (output += chunk.toString());
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  // 'close', not 'exit': it comes after the child's output has all been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    async waitFor(pattern, timeoutMs = 30_000) {
      await eventually(
        () => pattern.test(output),
        `the demo's output to match ${pattern}`,
        timeoutMs,
        () => `output:\n${output.slice(-4000)}`,
      );
      return output.match(pattern)!;
    },
  };
}

/** Kills what is left of a demo run (its group) if a test failed half-way. */
function killGroup(run: DemoRun | undefined): void {
  if (run) signalGroup(run.child, 'SIGKILL');
}

/** Reads an event stream until an `order` event arrives; returns its record. */
async function firstOrderEvent(url: string, apiKey: string): Promise<{ number: number; state: string }> {
  const stream = await TestStream.open(url, { apiKey });
  try {
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    await stream.waitFor(() => stream.events.some((e) => e.event === 'order'), 'an order event', 20_000);
    return stream.events.find((e) => e.event === 'order')!.json();
  } finally {
    stream.close();
  }
}

describe('npm run demo', () => {
  let run: DemoRun | undefined;
  afterEach(() => killGroup(run));

  it('plays --rounds N on the embedded default, completes orders, and ends by itself with exit code 0', async () => {
    run = runDemo(['--rounds', '3', '--tables', '2', '--pace', '400']);

    // What the banner tells a newcomer to do works while the demo runs.
    const [, curlKey, streamUrl] = await run.waitFor(
      /curl -N -H 'api_key: ([^']+)' (\S+\/notifications\/service\/stream)/,
    );
    const [, boardUrl, password] = await run.waitFor(
      /Bull Board: +(\S+\/admin\/queues) +\(user name: anything, e\.g\. admin; password: (\S+)\)/,
    );
    serviceAt(streamUrl!);
    const event = await firstOrderEvent(streamUrl!, curlKey!);
    expect(event.state).toMatch(/^(PLACED|COMPLETED|ABORTED)$/);
    const board = await fetch(boardUrl!, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` },
    });
    expect(board.status).toBe(200);
    expect(await board.text()).toContain('<base href="/admin/queues/"');
    expect((await fetch(boardUrl!)).status).toBe(401);
    // ... and so does the live board's address
    const [, liveBoard, locationId] = await run.waitFor(
      /live board: +(\S+\/board) +\(kitchen: the register key above; operator: the admin token and location id (\S+)\)/,
    );
    expect((await fetch(liveBoard!)).status).toBe(200);
    const location = await fetch(liveBoard!.replace(/\/board$/, `/admin/v1/locations/${locationId}`), {
      headers: { authorization: `Bearer ${password}` },
    });
    expect(location.status).toBe(200);

    expect(await run.exited).toBe(0);
    const output = run.output();
    const [, completed] = output.match(
      /demo │ done after 3 rounds: (\d+) orders completed, (\d+) aborted, (\d+) failed/,
    )!;
    expect(Number(completed)).toBeGreaterThanOrEqual(3);
    expect(output.match(/demo │ register: served order #\d+ to table \d: COMPLETED/g)?.length).toBe(Number(completed));
    expect(output).toMatch(/demo │ customer table \d \(guest \d+\): finished \(NEW\) and submitted order #\d+: PLACED/);
    // Round 3: a guest walks out and the closing of the session is reported.
    expect(output).toMatch(/walked out before order #\d+ came: session closed/);
    // The service's own log lines show the orders moving.
    expect(output).toMatch(/"from":"SELECTING","to":"NEW","action":"finish"/);
    expect(output).toMatch(/"from":"NEW","to":"PLACED","action":"submit"/);
    expect(output).toMatch(/"from":"PLACED","to":"COMPLETED","action":"status"/);
    expect(output).toContain('demo │ stopped');
    expect(output).not.toMatch(/ECONNREFUSED|shutdown took too long/);
  });

  it('runs until Ctrl-C (SIGINT to its process group), then shuts down cleanly with exit code 0', async () => {
    run = runDemo(['--tables', '2', '--pace', '200']);
    await run.waitFor(/Ctrl-C stops it/);
    await run.waitFor(/demo │ register: served order #\d+/);
    signalGroup(run.child, 'SIGINT');
    expect(await run.exited).toBe(0);
    const output = run.output();
    expect(output).toContain('demo │ stopping');
    expect(output).toContain('demo │ stopped');
    expect(output).toMatch(/"msg":"api stopped"/);
    expect(output).toMatch(/"msg":"worker stopped"/);
    // The embedded servers were stopped by the demo, not killed under it by the signal.
    expect(output).not.toMatch(/ECONNREFUSED|shutdown took too long/);
  });
});
