import { startRedisCluster } from '../../scripts/embedded/redis-cluster';
import type { ChildServer } from '../../scripts/embedded/child-server';
import globalSetup from './global-setup';

/**
 * The cluster tests' Redis Cluster (3 masters, 3 replicas on loopback) unless TEST_REDIS_CLUSTER_URL
 * names one, and MongoDB as for the other tests. Nothing fails over here: its node timeout is long
 * enough that a loaded machine never fails a master over by mistake. The failover test starts a
 * cluster of its own with a short one, and kills a master.
 */
export default async function clusterGlobalSetup(): Promise<void> {
  await globalSetup();
  if (process.env.TEST_REDIS_CLUSTER_URL) return;
  const cluster = await startRedisCluster({ nodeTimeoutMs: 5_000 });
  process.env.TEST_REDIS_CLUSTER_URL = cluster.url;
  const servers = (globalThis as { __POS_SERVERS__?: ChildServer[] }).__POS_SERVERS__!;
  servers.push({ url: cluster.url, process: cluster.nodes[0]!.server!.process, stop: () => cluster.stop() });
}
