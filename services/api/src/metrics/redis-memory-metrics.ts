import { Gauge, Registry } from 'prom-client';
import type Redis from 'ioredis';
import { isCluster, nodeKey, RedisClient } from '@pos/shared/redis';
import { withTimeout } from '@pos/shared/util/timeout';
import { SCRAPE_READ_TIMEOUT_MS, scrapeRead } from './scrape-read';

export interface RedisMemory {
  node: string;
  usedBytes: number;
  /** `maxmemory`; 0 when Redis has no limit. */
  maxBytes: number;
}

/** `used_memory` and `maxmemory` of an `INFO memory` answer. */
export function parseMemoryInfo(info: string): { usedBytes: number; maxBytes: number } | undefined {
  const field = (name: string) => {
    const match = new RegExp(`^${name}:(\\d+)\\r?$`, 'm').exec(info);
    return match ? Number(match[1]) : undefined;
  };
  const usedBytes = field('used_memory');
  const maxBytes = field('maxmemory');
  return usedBytes === undefined || maxBytes === undefined ? undefined : { usedBytes, maxBytes };
}

/** The server, or on a cluster every master, each by `host:port`. */
function nodesOf(redis: RedisClient): { node: string; connection: Redis }[] {
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis];
  return nodes.map((connection) => ({
    node: nodeKey(String(connection.options.host), Number(connection.options.port)),
    connection,
  }));
}

/** Each node's memory, read now; a node that fails or does not answer in time is absent. */
export async function readRedisMemory(redis: RedisClient, timeoutMs = SCRAPE_READ_TIMEOUT_MS): Promise<RedisMemory[]> {
  const read = async ({ node, connection }: { node: string; connection: Redis }) => {
    const memory = parseMemoryInfo(await withTimeout(connection.info('memory'), timeoutMs, `Redis INFO ${node}`));
    return memory && { node, ...memory };
  };
  const found = await Promise.all(nodesOf(redis).map((node) => read(node).catch(() => undefined)));
  return found.filter((memory): memory is RedisMemory => memory !== undefined);
}

/**
 * Redis memory against its limit, read from `INFO memory` at scrape time, one series per node
 * (the server, or each master of a cluster): Redis runs `noeviction`, so a full one refuses
 * writes and the transition queue stops for every location. Shared by the deployment, like the queue
 * depth: aggregate nodes' reports with `max`.
 */
export function registerRedisMemoryMetrics(registry: Registry, redis: RedisClient): void {
  const memory = scrapeRead(() => readRedisMemory(redis));
  const gauge = (name: string, help: string, value: (m: RedisMemory) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['node'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const m of await memory()) this.set({ node: m.node }, value(m));
      },
    });
  gauge(
    'pos_redis_memory_used_bytes',
    'Memory Redis uses (INFO memory used_memory), by node (each master on a cluster), read at scrape time',
    (m) => m.usedBytes,
  );
  gauge(
    'pos_redis_memory_max_bytes',
    "Redis's maxmemory (0: no limit), by node, read at scrape time",
    (m) => m.maxBytes,
  );
}
