/**
 * What differs from one cluster to another, and the two shapes the manifests come in. Change it
 * here, run `npm run kubernetes`, and apply what it writes (docs/deployment.md#kubernetes).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const { version } = JSON.parse(fs.readFileSync(path.join(HERE, '../../../package.json'), 'utf8')) as {
  version: string;
};

export const SITE = {
  /** Where the images of the Dockerfile's two targets are pushed (`docker build --target api|worker`). */
  images: { api: `registry.example.com/pos/api:${version}`, worker: `registry.example.com/pos/worker:${version}` },
  /**
   * The public name of the register-facing door, and the Secret of type kubernetes.io/tls holding its certificate.
   */
  host: 'pos.example.com',
  tlsSecret: 'pos-tls',
  /**
   * The ingress controller (ingress-nginx) and the namespace it runs in: the
   * only one allowed to reach the API's public port.
   */
  ingressClass: 'nginx',
  ingressNamespace: 'ingress-nginx',
  /** Where Prometheus (prometheus-operator) runs: it alone reaches /metrics; KEDA asks it for the queue's depth. */
  monitoringNamespace: 'monitoring',
  prometheusUrl: 'http://prometheus-operated.monitoring.svc:9090',
  /** The Secret every secret variable is read from (never written in these manifests). */
  secret: 'pos-secrets',
} as const;

/**
 * Pods with this label in the service's namespace may reach the operator port
 * (admin API, Bull Board): a toolbox, an internal ingress.
 */
export const OPERATOR_ACCESS_LABEL = 'pos.example.com/operator-access';

export interface Role {
  /** Replicas at rest; with autoscaling, the least. */
  replicas: number;
  /** The most an autoscaler may run; absent: no autoscaling. */
  maxReplicas?: number;
}

export interface Shape {
  name: 'single-node' | 'chain';
  description: string;
  api: Role;
  worker: Role;
  /** Redis is a Redis Cluster (REDIS_CLUSTER=1, REDIS_URL listing seed nodes). */
  redisCluster: boolean;
  /** Spread each role's pods over zones and nodes. */
  spread: boolean;
}

export const SHAPES: Shape[] = [
  {
    name: 'single-node',
    description: 'one replica of each role, one Redis: a small site, a staging namespace',
    api: { replicas: 1 },
    worker: { replicas: 1 },
    redisCluster: false,
    spread: false,
  },
  {
    name: 'chain',
    description: 'a chain: API nodes scaled on CPU, workers on the queue, spread over zones, on a Redis Cluster',
    api: { replicas: 3, maxReplicas: 12 },
    worker: { replicas: 2, maxReplicas: 8 },
    redisCluster: true,
    spread: true,
  },
];
