import { ChildServer, freePort, startChildServer } from './child-server';

/** A throwaway redis-server on loopback, configured as BullMQ requires (noeviction). */
export async function startRedisServer(): Promise<ChildServer> {
  const port = await freePort();
  return startChildServer(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
    /Ready to accept connections/,
    () => `redis://127.0.0.1:${port}`,
  );
}
