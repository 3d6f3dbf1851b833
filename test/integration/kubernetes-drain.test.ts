/**
 * The drain the Kubernetes manifests set up (deploy/kubernetes/chain/api.yaml): the preStop pause
 * while the pod leaves the Service's endpoints, then SIGTERM, then SIGKILL once
 * terminationGracePeriodSeconds have passed. An API node with streams open and requests waiting
 * on the queue gets the same SIGTERM: every stream ends in order with a fresh reconnection delay
 * as its last frame, every request in flight gets its answer (no reset), and the node exits 0
 * well within what the grace period leaves after the hook. The probes the manifests name answer.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { RunningWorker, startWorker } from '@pos/worker/worker';
import { call, sampleRows } from '../support/http';
import { openTransitionQueues } from '../support/queues';
import { streamPath, TestStream } from '../support/sse-client';
import { ROOT, spawnRole, stackEnv } from '../support/stack';
import { eventually } from '../support/wait';

const apiDeployment = YAML.parseAllDocuments(
  fs.readFileSync(path.join(ROOT, 'deploy/kubernetes/chain/api.yaml'), 'utf8'),
)
  .map((doc) => doc.toJS())
  .find((object: any) => object.kind === 'Deployment');
const pod = apiDeployment.spec.template.spec;
const container = pod.containers[0];
const manifest = {
  graceSeconds: pod.terminationGracePeriodSeconds as number,
  preStopSeconds: Number(container.lifecycle.preStop.exec.command[1]),
  shutdownGrace: container.env.find((e: any) => e.name === 'SHUTDOWN_GRACE').value as string,
  liveness: container.livenessProbe.httpGet.path as string,
  readiness: container.readinessProbe.httpGet.path as string,
};
const STREAMS = 12;
const UPDATES = 6;

describe('an API node drained as Kubernetes drains it', () => {
  it('answers the probes the manifests name; on SIGTERM ends every stream with its reconnection hint, answers every request in flight, and exits within the grace period', async () => {
    const env = stackEnv({
      JOB_TIMEOUT: '30s',
      SHUTDOWN_GRACE: manifest.shutdownGrace,
      SSE_MAX_STREAMS_PER_SESSION: String(STREAMS),
    });
    const api = await spawnRole('api', env);
    const origin = `http://127.0.0.1:${api.port}`;
    for (const probe of [manifest.liveness, manifest.readiness])
      expect([probe, (await call('GET', `${origin}${probe}`)).status]).toEqual([probe, 200]);

    const admin = new AdminClient(origin, env.ADMIN_TOKEN!);
    const location = await admin.createLocation('Drained');
    const { apiKey } = await admin.createServiceSession(location.id, 'reg-drain');
    const streams = await Promise.all(
      Array.from({ length: STREAMS }, () => TestStream.open(`${origin}${streamPath}`, { apiKey })),
    );
    await Promise.all(streams.map((stream) => stream.preamble()));

    // No worker yet: the updates wait in the queue while the node is told to stop.
    const orders = await Promise.all(Array.from({ length: UPDATES }, () => admin.createOrder(location.id, sampleRows)));
    const inFlight = orders.map((order) =>
      call('PUT', `${origin}/api/v1/orders/${order.number}/statusupdate`, { apiKey, body: { newState: 'COMPLETED' } }),
    );
    const { queues, close } = openTransitionQueues(env);
    let worker: RunningWorker | undefined;
    try {
      await eventually(async () => (await queues.jobCounts('waiting')).waiting === UPDATES, 'the updates queued');

      // The preStop hook has run (the pod is out of the endpoints): Kubernetes sends SIGTERM.
      const signalledAt = Date.now();
      api.process.kill('SIGTERM');
      await Promise.all(streams.map((stream) => stream.end()));
      for (const stream of streams) {
        expect({ endedCleanly: stream.endedCleanly, retries: stream.retries.length }).toEqual({
          endedCleanly: true,
          retries: 2,
        });
        expect(stream.raw).toMatch(/\nretry: \d+\n\n$/);
      }

      worker = await startWorker(loadConfig(env), createLogger('silent', 'test'));
      const answers = await Promise.all(inFlight);
      expect(answers.map((res) => [res.status, res.json().state])).toEqual(orders.map(() => [200, 'COMPLETED']));
      expect(await api.exited).toBe(0);
      expect(Date.now() - signalledAt).toBeLessThan((manifest.graceSeconds - manifest.preStopSeconds) * 1000);
    } finally {
      await worker?.close();
      await close();
    }
  });
});
