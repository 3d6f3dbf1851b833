import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { signalGroup, spawnGroup } from './process-group';

export interface ChildServer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Starts a server program and resolves once a line of its output matches `ready`;
 * `urlFrom` turns that match into the server's URL. The child dies with this process, however
 * this process ends (SIGKILL included: `setpriv --pdeathsig`).
 */
export function startChildServer(
  command: string,
  args: string[],
  ready: RegExp,
  urlFrom: (match: RegExpMatchArray) => string,
  timeoutMs = 20_000,
): Promise<ChildServer> {
  // Its own process group: a terminal's Ctrl-C reaches only the launcher, which stops the
  // child after its own graceful shutdown instead of losing it from under the service.
  const child = spawnGroup(command, args, { stdio: ['ignore', 'pipe', 'pipe'], diesWithParent: true });
  const killOnExit = () => signalGroup(child, 'SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    signalGroup(child, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${command} did not become ready in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(ready);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      // Keep draining so that a chatty child never blocks on a full pipe.
      child.stdout?.resume();
      child.stderr?.resume();
      resolve({ url: urlFrom(match), process: child, stop });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not start ${command}: ${err.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before it was ready:\n${output}`));
    });
  });
}
