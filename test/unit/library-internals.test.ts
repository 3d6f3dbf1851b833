/**
 * What the service relies on of other libraries' internals (docs/architecture.md#reaches-into-libraries-internals):
 * each test fails when the library changes it, so that the reach is mended or goes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { releaseSentHead } from '@pos/shared/internals/node-sent-head';
import { flattenBindings } from '@pos/shared/internals/pino-bindings';
import { createLogger } from '@pos/shared/log';

describe("pino's child bindings (flattenBindings)", () => {
  it('are one string under its symbol, and flattened give the same lines', () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger('info', 'pos', {
      write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    const child = log.child({ requestId: 'req-1', apiKey: 'pos_secret' });
    child.setBindings({ sessionId: 'session-1', locationId: 'location-1' });
    child.info({ n: 1 }, 'before');
    expect(flattenBindings(child)).toBe(true);
    child.info({ n: 1 }, 'before');
    child.setBindings({ operatorId: 'operator-1' });
    child.info('after');

    const [before, flattened, after] = lines.map(({ time: _time, ...line }) => line);
    expect(flattened).toEqual(before);
    expect(before).toMatchObject({
      service: 'pos',
      requestId: 'req-1',
      apiKey: '[REDACTED]',
      sessionId: 'session-1',
      locationId: 'location-1',
    });
    expect(after).toMatchObject({
      requestId: 'req-1',
      sessionId: 'session-1',
      locationId: 'location-1',
      operatorId: 'operator-1',
      msg: 'after',
    });
  });
});

describe("Node's sent head (releaseSentHead)", () => {
  it('is kept as `_header` once `_headerSent`; replaced, the response still streams to its end', async () => {
    let kept = '';
    let released = false;
    const server = createServer((_req, res: ServerResponse) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'X-Request-Id': 'req-1' });
      res.flushHeaders();
      kept = String((res as unknown as { _header: unknown })._header);
      released = releaseSentHead(res);
      expect(res.headersSent).toBe(true);
      res.write('data: one\n\n');
      res.end('data: two\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await new Promise<{ status: number; requestId: unknown; body: string }>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/' }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, requestId: res.headers['x-request-id'], body }));
        })
          .on('error', reject)
          .end();
      });
      expect(kept).toContain('X-Request-Id: req-1');
      expect(released).toBe(true);
      expect(answer).toEqual({ status: 200, requestId: 'req-1', body: 'data: one\n\ndata: two\n\n' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("tsx's named class fields (ClientStream's and SseWriter's bound callbacks)", () => {
  it('wraps an arrow in a class field with __name, which a bound method avoids', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pos-tsx-'));
    try {
      const file = path.join(dir, 'holder.ts');
      writeFileSync(
        file,
        'class Holder { private readonly onClose = () => 1; }\nprocess.stdout.write(String(Holder));\n',
      );
      const source = execFileSync(process.execPath, ['--require', 'tsx/cjs', file], {
        cwd: path.join(__dirname, '../..'),
        encoding: 'utf8',
      });
      // If this fails, tsx names arrows as V8 does, and the bound callbacks can be arrows again.
      expect(source).toMatch(/onClose\s*=\s*__name\(/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
