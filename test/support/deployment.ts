/**
 * One deployment of two API nodes and two workers in this process, on the test run's Redis and
 * MongoDB: what tests of cross-node and cross-worker behaviour (presence, deadlines) run against.
 */
import { AdminClient } from '@pos/shared/clients/admin-client';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { RunningApi, startApi } from '@pos/api/server';
import { RunningWorker, startWorker } from '@pos/worker/worker';
import { serviceAt } from './contract';
import { adminTokenAt } from './metrics';
import { TestStream } from './sse-client';
import { stackEnv, StackEnv } from './stack';

/** Two API nodes and two workers of one deployment, in this process. */
export async function startDeployment(overrides: StackEnv = {}) {
  const env = stackEnv(overrides);
  const config = loadConfig(env);
  const log = createLogger(env.LOG_LEVEL!, 'test');
  const workers: RunningWorker[] = [await startWorker(config, log), await startWorker(config, log)];
  const apis: RunningApi[] = [await startApi(config, log), await startApi(config, log)];
  const origins = apis.map((api) => `http://127.0.0.1:${api.port}`);
  for (const origin of origins) {
    serviceAt(origin);
    adminTokenAt(origin, env.ADMIN_TOKEN);
  }
  return {
    env,
    a: { origin: origins[0]!, admin: new AdminClient(origins[0]!, env.ADMIN_TOKEN!), baseUrl: `${origins[0]}/api/v1` },
    b: { origin: origins[1]!, admin: new AdminClient(origins[1]!, env.ADMIN_TOKEN!), baseUrl: `${origins[1]}/api/v1` },
    async close() {
      await Promise.all(apis.map((api) => api.close()));
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}
export type Deployment = Awaited<ReturnType<typeof startDeployment>>;

/** The operator's stream of a location, on a node. */
export async function operatorStream(origin: string, env: StackEnv, locationId: string): Promise<TestStream> {
  const stream = await TestStream.open(`${origin}/admin/v1/locations/${locationId}/stream`, {
    headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
  });
  expect(stream.status).toBe(200);
  await stream.preamble();
  return stream;
}
