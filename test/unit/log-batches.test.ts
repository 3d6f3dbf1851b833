/**
 * The service's log lines are written in batches (LOG_FLUSH_INTERVAL): a line waits for others up
 * to the interval, and an idle process writes nothing at all.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { batchedDestination, createLogger } from '@pos/shared/log';

const FLUSH_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the log in batches', () => {
  let dir: string;
  let fd: number;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-log-'));
    fd = fs.openSync(path.join(dir, 'out.log'), 'a');
  });

  // (the destination closes the file when destroyed)
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes the lines that wait once per interval, and nothing while none waits', async () => {
    const destination = batchedDestination(fd, FLUSH_MS);
    const writes: number[] = [];
    destination.on('write', (bytes: number) => writes.push(bytes));
    const log = createLogger('info', 'pos', destination);

    await sleep(FLUSH_MS * 5);
    expect(writes).toEqual([]); // idle: not even an empty write

    log.info({ n: 1 }, 'first');
    log.info({ n: 2 }, 'second');
    expect(writes).toEqual([]); // waiting for others
    await sleep(FLUSH_MS * 4);
    const lines = fs.readFileSync(path.join(dir, 'out.log'), 'utf8').trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['first', 'second']);
    expect(writes).toHaveLength(1); // both in one write, then nothing more

    await sleep(FLUSH_MS * 4);
    expect(writes).toHaveLength(1);

    // closed with a line waiting: its flushes stop with it (a flush after the close would throw)
    log.info('last');
    destination.destroy();
    await sleep(FLUSH_MS * 3);
  });
});
