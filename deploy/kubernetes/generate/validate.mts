/**
 * Validates manifests as written and as Kubernetes reads them (YAML 1.1), against the schemas of
 * Kubernetes, KEDA and prometheus-operator (the kubernetes-models packages):
 * every object of each file named (by default, every file of
 * every shape), by its apiVersion and kind. Prints one JSON line per object; exits 1 if any fails
 * or is of a kind it does not know. test/shipped/kubernetes.test.ts runs it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Service } from 'kubernetes-models/v1/Service';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { KUBERNETES_YAML } from './manifests.mjs';
import { SHAPES } from './site.mjs';

type Model = { validate(): void };
const MODELS: Record<string, new (data: never) => Model> = {
  'apps/v1 Deployment': Deployment,
  'v1 Service': Service,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1 Ingress': Ingress,
  'keda.sh/v1alpha1 ScaledObject': ScaledObject,
  'monitoring.coreos.com/v1 ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1 PrometheusRule': PrometheusRule,
};

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const named = process.argv.slice(2);
const files =
  named.length > 0
    ? named
    : SHAPES.flatMap((shape) =>
        fs.readdirSync(path.join(ROOT, shape.name)).map((file) => path.join(ROOT, shape.name, file)),
      );

let failed = false;
for (const file of files) {
  // as kubectl reads it (YAML 1.1): an unquoted `off` is a boolean, which no annotation may be
  for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'), KUBERNETES_YAML)) {
    const object = doc.toJS() as { apiVersion?: string; kind?: string; metadata?: { name?: string } };
    const type = `${object.apiVersion} ${object.kind}`;
    const Model = MODELS[type];
    let error: string | undefined;
    try {
      if (!Model) throw new Error(`unknown kind ${type}`);
      new Model(object as never).validate();
    } catch (err) {
      error = (err as Error).message;
      failed = true;
    }
    process.stdout.write(
      `${JSON.stringify({ file: path.relative(ROOT, file), type, name: object.metadata?.name, ...(error ? { error } : {}) })}\n`,
    );
  }
}
process.exit(failed ? 1 : 0);
