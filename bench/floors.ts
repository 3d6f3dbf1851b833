/**
 * The architecture's floors (issue 25): the thinnest correct programs built from the service's
 * own parts, run beside a deployment on its database (and on a Redis prefix of their own), so
 * that a floor and the service read and write the same documents in the same run. The service's
 * figures are judged as ratios to these.
 */
import type { CostProbe } from './cost';
import type { Backends, Deployment } from './deployment';
import { probeOf } from './deployment';
import { BenchChild, spawnNode } from './processes';

export interface Floor {
  origin: string;
  probe(): CostProbe;
  stop(): Promise<void>;
}

function floorEnv(backends: Backends, deployment: Deployment): Record<string, string> {
  return { MONGO_URL: backends.mongoUrl, MONGO_DB: deployment.db, REDIS_URL: backends.redisUrl, REDIS_PREFIX: `${deployment.redisPrefix}:floor` };
}

const metricsOf = (child: BenchChild) => `http://127.0.0.1:${/"metricsPort":(\d+)/.exec(child.ready[0])![1]}/metrics`;

/** Koa, one `find` of the location's PLACED orders, records out (bench/bare/poll-floor.ts): `GET /orders/location?locationId=`. */
export async function startPollFloor(backends: Backends, deployment: Deployment): Promise<Floor> {
  const child = await spawnNode('floor-poll', 'bench/bare/poll-floor.ts', floorEnv(backends, deployment), /"port":(\d+),"metricsPort":\d+/, backends.logDir);
  return {
    origin: `http://127.0.0.1:${child.ready[1]}`,
    probe: () => probeOf(backends, [{ role: 'floor-api', pid: child.process.pid! }], [{ role: 'floor-api', metricsUrl: metricsOf(child) }]),
    stop: () => child.stop(),
  };
}

/**
 * Koa → `Queue.add` → a worker's `findOne` and version-guarded `findOneAndUpdate` → reply on
 * pub/sub (bench/bare/status-floor-*.ts): `PUT /orders/{n}/statusupdate` with `x-location`.
 */
export async function startStatusFloor(backends: Backends, deployment: Deployment, extraEnv: Record<string, string> = {}): Promise<Floor> {
  const env = { ...floorEnv(backends, deployment), ...extraEnv };
  const worker = await spawnNode('floor-status-worker', 'bench/bare/status-floor-worker.ts', env, /"metricsPort":\d+/, backends.logDir);
  let api: BenchChild;
  try {
    api = await spawnNode('floor-status-api', 'bench/bare/status-floor-api.ts', env, /"port":(\d+)/, backends.logDir);
  } catch (err) {
    await worker.stop();
    throw err;
  }
  return {
    origin: `http://127.0.0.1:${api.ready[1]}`,
    probe: () =>
      probeOf(
        backends,
        [
          { role: 'floor-api', pid: api.process.pid! },
          { role: 'floor-worker', pid: worker.process.pid! },
        ],
        [{ role: 'floor-worker', metricsUrl: metricsOf(worker) }],
      ),
    stop: async () => {
      await api.stop();
      await worker.stop();
    },
  };
}
