import { pingRedis } from '@pos/shared/redis';
import { pingMongo } from '@pos/shared/store/mongo';
import { withTimeout } from '@pos/shared/util/timeout';
import type { ApiDeps } from '../deps';

const PROBE_TIMEOUT_MS = 2_000;

export type DependencyState = 'ok' | 'unreachable' | 'resubscribing';

export interface Readiness {
  ready: boolean;
  accepting: boolean;
  mongo: DependencyState;
  redis: DependencyState;
}

/**
 * What /readyz answers and `pos_ready` reports: MongoDB and Redis answer (on a cluster, every
 * master serving slots), the node's pub/sub subscriptions are all in place, and it is not
 * shutting down. One definition, so the probe and the alert cannot disagree.
 */
export async function checkReadiness(
  deps: Pick<ApiDeps, 'db' | 'redis' | 'subscriber' | 'isAccepting'>,
): Promise<Readiness> {
  const accepting = deps.isAccepting();
  const checks = await Promise.allSettled([
    withTimeout(pingMongo(deps.db), PROBE_TIMEOUT_MS, 'MongoDB'),
    pingRedis(deps.redis, PROBE_TIMEOUT_MS),
  ]);
  const [mongo, reachable] = checks.map((c): DependencyState => (c.status === 'fulfilled' ? 'ok' : 'unreachable'));
  const redis = reachable === 'ok' && !deps.subscriber.allSubscribed ? 'resubscribing' : reachable!;
  return { ready: accepting && mongo === 'ok' && redis === 'ok', accepting, mongo: mongo!, redis };
}
