/**
 * The two roles as Deployments and Services: the images of the Dockerfile, the probes the
 * processes serve, resources sized from the bench (docs/benchmarks.md), a non-root read-only
 * container, and the drain: what a pod does between Kubernetes deciding to stop it and SIGKILL.
 */
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Service } from 'kubernetes-models/v1/Service';
import type { IContainer as Container } from 'kubernetes-models/v1/Container';
import type { IPodSpec as PodSpec } from 'kubernetes-models/v1/PodSpec';
import type { ITopologySpreadConstraint as TopologySpreadConstraint } from 'kubernetes-models/v1/TopologySpreadConstraint';
import { apiEnv, PORTS, SHUTDOWN_GRACE_SECONDS, workerEnv } from './environment.mjs';
import { type Shape, SITE } from './site.mjs';

export type RoleName = 'api' | 'worker';

export const labelsOf = (role: RoleName) => ({
  'app.kubernetes.io/name': `pos-${role}`,
  'app.kubernetes.io/part-of': 'pos-ordering-service',
  'app.kubernetes.io/component': role,
});
export const selectorOf = (role: RoleName) => ({ 'app.kubernetes.io/name': `pos-${role}` });

/**
 * The API's preStop pause: Kubernetes takes a terminating pod out of the Service's endpoints at the
 * same time as it runs the hook, and the ingress controller hears of it a moment later. The node
 * keeps serving meanwhile; only then does SIGTERM make it stop accepting.
 */
export const PRE_STOP_SECONDS = 5;
/**
 * After SIGTERM an API node ends its streams (each with a fresh jittered `retry:`), lets
 * in-flight requests finish for SHUTDOWN_GRACE, then closes its queues and connections (a few
 * seconds at most): the grace period covers all of it, and the hook before.
 */
export const API_TERMINATION_GRACE_SECONDS = PRE_STOP_SECONDS + SHUTDOWN_GRACE_SECONDS + 15;
/**
 * A worker stops taking jobs and finishes the active ones within SHUTDOWN_GRACE;
 * one killed after hands them back when their lock lapses.
 */
export const WORKER_TERMINATION_GRACE_SECONDS = SHUTDOWN_GRACE_SECONDS + 15;

/**
 * Resources, from the bench on 2 cores: an API node costs about 1 ms of CPU per status update and
 * 0.5 ms per poll, and about 20 KiB per open stream over some 100 MiB at rest (10,000 streams, the
 * default SSE_MAX_STREAMS: 300 MiB); a worker about 2 ms per transition. Requests are what the
 * scheduler reserves (and what the API's CPU autoscaling is a share of); the memory limit leaves
 * room for a burst, and one core is what one Node process's main thread can use.
 */
const RESOURCES = {
  api: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '1', memory: '768Mi' } },
  worker: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
};

const hardened: Pick<Container, 'securityContext' | 'volumeMounts'> = {
  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  // Node writes nothing to disk; a small /tmp for what a library may want there.
  volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
};

function spreadOf(role: RoleName): TopologySpreadConstraint[] {
  return ['topology.kubernetes.io/zone', 'kubernetes.io/hostname'].map((topologyKey) => ({
    maxSkew: 1,
    topologyKey,
    // a zone short of room must not stop a pod from starting elsewhere
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: selectorOf(role) },
  }));
}

function podSpec(shape: Shape, role: RoleName, container: Container, terminationGracePeriodSeconds: number): PodSpec {
  return {
    // neither role talks to the Kubernetes API
    automountServiceAccountToken: false,
    // the configuration schema refuses nothing extra, but service links would add variables nobody reads
    enableServiceLinks: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    terminationGracePeriodSeconds,
    ...(shape.spread ? { topologySpreadConstraints: spreadOf(role) } : {}),
    containers: [{ ...container, ...hardened, resources: RESOURCES[role] }],
    volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }],
  };
}

function deployment(shape: Shape, role: RoleName, spec: PodSpec): Deployment {
  return new Deployment({
    metadata: { name: `pos-${role}`, labels: labelsOf(role) },
    spec: {
      replicas: shape[role].replicas,
      selector: { matchLabels: selectorOf(role) },
      // a new pod takes its share before an old one stops: never fewer than asked for
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
      minReadySeconds: 5,
      template: { metadata: { labels: labelsOf(role) }, spec },
    },
  });
}

export function apiDeployment(shape: Shape): Deployment {
  const container: Container = {
    name: 'api',
    image: SITE.images.api,
    env: apiEnv(shape),
    ports: [
      { name: 'http', containerPort: PORTS.http },
      { name: 'admin', containerPort: PORTS.admin },
    ],
    // the process answers (no dependency checked: a Redis outage must not restart every node)
    livenessProbe: {
      httpGet: { path: '/healthz', port: 'http' },
      periodSeconds: 10,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
    // MongoDB and Redis answer, the subscriptions are in place, and it is not shutting down
    readinessProbe: {
      httpGet: { path: '/readyz', port: 'http' },
      periodSeconds: 5,
      timeoutSeconds: 2,
      failureThreshold: 2,
    },
    // the first start creates MongoDB's indexes
    startupProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 2, failureThreshold: 30 },
    lifecycle: { preStop: { exec: { command: ['sleep', String(PRE_STOP_SECONDS)] } } },
  };
  return deployment(shape, 'api', podSpec(shape, 'api', container, API_TERMINATION_GRACE_SECONDS));
}

export function workerDeployment(shape: Shape): Deployment {
  const container: Container = {
    name: 'worker',
    image: SITE.images.worker,
    env: workerEnv(shape),
    ports: [{ name: 'metrics', containerPort: PORTS.metrics }],
    livenessProbe: {
      httpGet: { path: '/healthz', port: 'metrics' },
      periodSeconds: 10,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
  };
  return deployment(shape, 'worker', podSpec(shape, 'worker', container, WORKER_TERMINATION_GRACE_SECONDS));
}

/** The API's Service: the public port for the ingress, the operator port for operators and Prometheus. */
export function apiService(): Service {
  return new Service({
    metadata: { name: 'pos-api', labels: labelsOf('api') },
    spec: {
      selector: selectorOf('api'),
      ports: [
        { name: 'http', port: PORTS.http, targetPort: 'http' },
        { name: 'admin', port: PORTS.admin, targetPort: 'admin' },
      ],
    },
  });
}

/**
 * The workers' Service: only for Prometheus to find each worker's /metrics (headless: no traffic goes through it).
 */
export function workerService(): Service {
  return new Service({
    metadata: { name: 'pos-worker', labels: labelsOf('worker') },
    spec: {
      clusterIP: 'None',
      selector: selectorOf('worker'),
      ports: [{ name: 'metrics', port: PORTS.metrics, targetPort: 'metrics' }],
    },
  });
}
