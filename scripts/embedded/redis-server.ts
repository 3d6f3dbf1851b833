import { ChildServer, freePort, startChildServer } from './child-server';

/**
 * A throwaway redis-server on loopback, configured as BullMQ requires (noeviction); on a free
 * port unless one is given (a test restarting "the same" Redis).
 */
export async function startRedisServer(port?: number): Promise<ChildServer> {
  const listen = port ?? (await freePort());
  return startChildServer(
    'redis-server',
    ['--port', String(listen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
    /Ready to accept connections/,
    () => `redis://127.0.0.1:${listen}`,
  );
}
