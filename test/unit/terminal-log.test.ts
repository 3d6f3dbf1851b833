/**
 * `npm start`'s log: readable lines on a terminal, pino's JSON lines anywhere else (a pipe, a
 * file, CI, a container), keys redacted either way.
 */
import { execFileSync } from 'node:child_process';
import { createLogger } from '@pos/shared/log';
import { ROOT } from '../../scripts/embedded/spawn-role';
import { terminalLog } from '../../scripts/terminal-log';

const isJson = (line: string) => {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
};

/** Logs one request line the way the service does, through `terminalLog(out)`. */
function logThrough(isTTY: boolean | undefined): { chosen: boolean; lines: string[] } {
  const lines: string[] = [];
  const out = { isTTY, write: (text: string) => lines.push(text) };
  const destination = terminalLog(out);
  if (destination)
    createLogger('info', 'pos', destination).info(
      { requestId: 'req-1', api_key: 'pos_secret' },
      'order transition applied',
    );
  return { chosen: destination !== undefined, lines };
}

describe('the log of npm start', () => {
  it('is pretty on a terminal: one readable line, not JSON, the key redacted', () => {
    const { chosen, lines } = logThrough(true);
    expect(chosen).toBe(true);
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatch(/INFO/);
    expect(line).toContain('order transition applied');
    expect(line).toContain('req-1');
    expect(line).toContain('[REDACTED]');
    expect(line).not.toContain('pos_secret');
    expect(line.trimEnd().split('\n')).toHaveLength(1);
    expect(isJson(line)).toBe(false);
  });

  it('keeps pino JSON anywhere else: no pretty destination for a pipe or a file', () => {
    expect(logThrough(false).chosen).toBe(false);
    expect(logThrough(undefined).chosen).toBe(false);
  });

  /** A process that logs one line as scripts/start.ts does, its stdout a pipe or a terminal. */
  const program =
    "const { createLogger } = require('@pos/shared/log'); const { terminalLog } = require('./scripts/terminal-log');" +
    "createLogger('info', 'pos', terminalLog()).info({ requestId: 'req-2' }, 'api listening');";
  const node = [process.execPath, '--require', 'tsx/cjs', '-e', program];

  it('writes JSON lines when its stdout is a pipe', () => {
    const output = execFileSync(node[0]!, node.slice(1), {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'info' },
    }).toString();
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 30,
      msg: 'api listening',
      requestId: 'req-2',
      service: 'pos',
    });
  });

  it('writes readable lines when its stdout is a terminal (a pseudo-terminal from util-linux script)', () => {
    const command = node.map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
    const output = execFileSync('script', ['-qfec', command, '/dev/null'], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
    }).toString();
    const line = output.replace(/\r/g, '').trim();
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: api listening/);
    expect(line).toContain('req-2');
    expect(isJson(line)).toBe(false);
  });
});
