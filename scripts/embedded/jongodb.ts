import path from 'node:path';
import { ChildServer, freePort, startChildServer } from './child-server';

/**
 * The in-memory MongoDB wire-protocol stand-in, for tests and the embedded default when no
 * MONGO_URL is given. It keeps nothing on disk.
 */
export async function startJongodb(): Promise<ChildServer> {
  const pkg = require.resolve('@jongodb/memory-server-bin-linux-x64-gnu/package.json');
  const binary = path.join(path.dirname(pkg), 'bin', 'jongodb');
  const port = await freePort();
  return startChildServer(binary, [`--port=${port}`], /JONGODB_URI=(\S+)/, (match) => match[1]!);
}
