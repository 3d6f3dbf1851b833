import { ChildServer, freePort, startChildServer } from './child-server';

export interface RedisServerOptions {
  /**
   * Persist to an append-only file in this folder (fsync every second, Redis's default), so that
   * a Redis killed and started again on it comes back with what it had, less up to a second.
   */
  dir?: string;
}

/**
 * A throwaway redis-server on loopback, configured as BullMQ requires (noeviction); on a free
 * port unless one is given (a test restarting "the same" Redis).
 */
export async function startRedisServer(port?: number, options: RedisServerOptions = {}): Promise<ChildServer> {
  const listen = port ?? (await freePort());
  const persistence =
    options.dir === undefined
      ? ['--appendonly', 'no']
      : ['--dir', options.dir, '--appendonly', 'yes', '--appendfsync', 'everysec'];
  return startChildServer(
    'redis-server',
    ['--port', String(listen), '--bind', '127.0.0.1', '--save', '', ...persistence, '--maxmemory-policy', 'noeviction'],
    /Ready to accept connections/,
    () => `redis://127.0.0.1:${listen}`,
  );
}
