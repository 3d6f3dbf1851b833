/**
 * Prometheus through prometheus-operator: a ServiceMonitor per role, whose job names (the
 * Services' names, `pos-api` and `pos-worker`) are those deploy/prometheus/rules.yml expects, and
 * a PrometheusRule that is rules.yml itself, read when the manifests are generated (one source).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { SITE } from './site.mjs';
import { labelsOf, selectorOf } from './workloads.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export const RULES_FILE = path.join(HERE, '../../prometheus/rules.yml');

/** An API node's /metrics is on its operator port, behind the admin token. */
export function apiMonitor(): ServiceMonitor {
  return new ServiceMonitor({
    metadata: { name: 'pos-api', labels: labelsOf('api') },
    spec: {
      selector: { matchLabels: selectorOf('api') },
      endpoints: [
        {
          port: 'admin',
          path: '/metrics',
          interval: '15s',
          authorization: { type: 'Bearer', credentials: { name: SITE.secret, key: 'ADMIN_TOKEN' } },
        },
      ],
    },
  });
}

/** A worker's /metrics is on METRICS_PORT, without a token (the network policy keeps it to Prometheus). */
export function workerMonitor(): ServiceMonitor {
  return new ServiceMonitor({
    metadata: { name: 'pos-worker', labels: labelsOf('worker') },
    spec: {
      selector: { matchLabels: selectorOf('worker') },
      endpoints: [{ port: 'metrics', path: '/metrics', interval: '15s' }],
    },
  });
}

export function rules(): PrometheusRule {
  const { groups } = YAML.parse(fs.readFileSync(RULES_FILE, 'utf8')) as { groups: unknown[] };
  return new PrometheusRule({
    metadata: { name: 'pos', labels: { 'app.kubernetes.io/part-of': 'pos-ordering-service' } },
    spec: { groups: groups as PrometheusRule['spec']['groups'] },
  });
}
