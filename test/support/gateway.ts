/**
 * The gateway of docker-compose.yml, for real: Debian's nginx (installed by
 * `scripts/setup.sh --test`) running the project's own deploy/nginx.conf, with only its
 * upstream pointed at a test's API node and its listen port made free. A missing nginx fails
 * the test; it does not skip.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../scripts/embedded/child-server';
import { signalGroup, spawnGroup } from '../../scripts/embedded/process-group';
import { ROOT } from '../../scripts/embedded/spawn-role';
import { eventually } from './wait';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((candidate) => fs.existsSync(candidate)) ?? 'nginx';

export interface Gateway {
  origin: string;
  /** nginx's access and error log lines so far. */
  output(): string;
  stop(): Promise<void>;
}

/** deploy/nginx.conf with `upstream` at the API node and `listen` on the given port; the rest as written. */
export function gatewayConfig(upstreamPort: number, listenPort: number): string {
  const original = fs.readFileSync(path.join(ROOT, 'deploy/nginx.conf'), 'utf8');
  const replace = (text: string, pattern: RegExp, by: string) => {
    if ((text.match(new RegExp(pattern.source, 'g')) ?? []).length !== 1)
      throw new Error(`deploy/nginx.conf: expected one ${pattern}`);
    return text.replace(pattern, by);
  };
  const upstream = replace(original, /server\s+api:8080;/, `server 127.0.0.1:${upstreamPort};`);
  return replace(upstream, /listen\s+8080;/, `listen 127.0.0.1:${listenPort};`);
}

export async function startGateway(upstreamPort: number): Promise<Gateway> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-gateway-'));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'gateway.conf'), gatewayConfig(upstreamPort, port));
  // What nginx.conf of the image gives the included file: the main and events contexts, and
  // temp paths of our own (the packaged ones belong to root).
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((name) => `${name}_temp_path ${path.join(dir, name)};`)
    .join('\n  ');
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    [
      // as root, nginx would run its workers as nobody, who cannot write the temp paths
      process.getuid?.() === 0 ? 'user root;' : '',
      'daemon off;',
      'worker_processes 1;',
      `pid ${path.join(dir, 'nginx.pid')};`,
      'error_log stderr warn;',
      'events { worker_connections 512; }',
      `http {\n  ${temp}\n  include ${path.join(dir, 'gateway.conf')};\n}`,
      '',
    ].join('\n'),
  );

  // A file, not a pipe: the configuration's `access_log /dev/stdout` cannot open a socket.
  const logFile = path.join(dir, 'output.log');
  const fd = fs.openSync(logFile, 'a');
  const child: ChildProcess = spawnGroup(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], {
    stdio: ['ignore', fd, fd],
    diesWithParent: true,
  });
  fs.closeSync(fd);
  const output = () => fs.readFileSync(logFile, 'utf8');
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const spawnError = new Promise<never>((_resolve, reject) =>
    child.once('error', (err) =>
      reject(new Error(`nginx (${NGINX}) could not be started; run scripts/setup.sh --test: ${err.message}`)),
    ),
  );

  // Ready once it accepts connections; failed if it exits first (a bad configuration).
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
  const listening = async () => {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}):\n${output()}`);
    return Promise.race([spawnError, accepts()]);
  };
  await eventually(listening, 'nginx to listen', 10_000, () => `output:\n${output()}`).catch((err: unknown) => {
    signalGroup(child, 'SIGKILL');
    throw err;
  });

  return {
    origin: `http://127.0.0.1:${port}`,
    output,
    async stop() {
      if (child.exitCode === null) signalGroup(child, 'SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
