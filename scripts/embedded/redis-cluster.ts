/**
 * A throwaway Redis Cluster on loopback from Debian's redis-server: masters, their replicas,
 * `redis-cli --cluster create`, then a wait until every slot is served and every replica has
 * finished its first sync. For the cluster tests, the benchmark and `REDIS_CLUSTER=1 npm start`.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import net from 'node:net';
import { ChildServer, startChildServer } from './child-server';

const run = promisify(execFile);

export interface ClusterOptions {
  /** Default 3. */
  masters?: number;
  /** Replicas per master; default 1. */
  replicas?: number;
  /** `cluster-node-timeout`: how long a silent master takes to be declared failed. Default 1 s. */
  nodeTimeoutMs?: number;
}

export interface ClusterNode {
  port: number;
  /** `127.0.0.1:<port>`, as CLUSTER NODES and ioredis name the node. */
  address: string;
  /** Null while the node is stopped. */
  server: ChildServer | null;
  /** The redis-server process id, for kills and /proc readings. */
  readonly pid: number | undefined;
}

export interface LocalRedisCluster {
  /** The seed list for `REDIS_URL` with `REDIS_CLUSTER=1`. */
  url: string;
  nodes: ClusterNode[];
  /** SIGKILL, as a crash would: no goodbye to the other nodes. */
  kill(node: ClusterNode): Promise<void>;
  stop(): Promise<void>;
}

/** `count` distinct free ports: each listened on until all are found, then released. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve) => {
          const server = net.createServer();
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

function ask(port: number): Redis {
  return new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
}

/** One command to one node; undefined when it does not answer. */
async function query(port: number, ...args: [string, ...string[]]): Promise<string | undefined> {
  const redis = ask(port);
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return String(await redis.call(...args));
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

export async function startRedisCluster(options: ClusterOptions = {}): Promise<LocalRedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1_000;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-redis-cluster-'));

  const start = (port: number, busPort: number) =>
    startChildServer(
      'redis-server',
      [
        '--port',
        String(port),
        '--cluster-port',
        String(busPort),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
        // A failed master stops only its own slots, not the whole cluster.
        '--cluster-require-full-coverage',
        'no',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--maxmemory-policy',
        'noeviction',
      ],
      /Ready to accept connections/,
      () => `redis://127.0.0.1:${port}`,
    );

  const nodes: Array<ClusterNode & { busPort: number }> = [];
  const stopAll = async () => {
    await Promise.all(nodes.map((node) => node.server?.stop()));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const count = masters * (1 + replicas);
    const ports = await freePorts(2 * count);
    for (let i = 0; i < count; i++) {
      const node = {
        port: ports[2 * i]!,
        busPort: ports[2 * i + 1]!,
        address: `127.0.0.1:${ports[2 * i]}`,
        server: null as ChildServer | null,
        get pid() {
          return this.server?.process.pid;
        },
      };
      nodes.push(node);
    }
    // A port taken by someone else meanwhile: that node moves to other ports (nothing is joined yet).
    await Promise.all(
      nodes.map(async (node) => {
        for (let attempt = 1; ; attempt++) {
          try {
            node.server = await start(node.port, node.busPort);
            return;
          } catch (err) {
            if (attempt === 3 || !/Address already in use/.test((err as Error).message)) throw err;
            const [port, busPort] = await freePorts(2);
            Object.assign(node, { port, busPort, address: `127.0.0.1:${port}` });
          }
        }
      }),
    );
    await run(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', String(replicas), '--cluster-yes'],
      {
        timeout: 60_000,
      },
    );
  } catch (err) {
    await stopAll();
    throw err;
  }

  const settled = async (timeoutMs = 30_000): Promise<boolean> => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (
        await isSettled(
          nodes.filter((n) => n.server !== null).map((n) => n.port),
          masters,
        )
      )
        return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  };

  const cluster: LocalRedisCluster = {
    url: nodes.map((n) => `redis://${n.address}`).join(','),
    nodes,
    async kill(node) {
      const server = node.server;
      if (!server) return;
      const exited = new Promise<void>((resolve) => server.process.once('exit', () => resolve()));
      server.process.kill('SIGKILL');
      await exited;
      await server.stop();
      node.server = null;
    },
    stop: stopAll,
  };
  if (!(await settled(60_000))) {
    await stopAll();
    throw new Error('the Redis Cluster did not settle (slots served, replicas in sync) within 60 s');
  }
  return cluster;
}

/**
 * Every live node sees a healthy cluster with `masters` masters, and every replica has a live
 * link to its master and no sync under way (its first full sync is done).
 */
async function isSettled(ports: number[], masters: number): Promise<boolean> {
  for (const port of ports) {
    const info = await query(port, 'CLUSTER', 'INFO');
    if (!info || !/cluster_state:ok/.test(info) || !/cluster_slots_ok:16384/.test(info)) return false;
    if (!new RegExp(`cluster_size:${masters}\\b`).test(info)) return false;
    const replication = await query(port, 'INFO', 'replication');
    if (!replication) return false;
    if (
      /role:slave/.test(replication) &&
      (!/master_link_status:up/.test(replication) || !/master_sync_in_progress:0/.test(replication))
    ) {
      return false;
    }
  }
  return true;
}
