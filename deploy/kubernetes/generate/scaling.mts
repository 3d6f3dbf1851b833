/**
 * How many pods run, and how many may be taken away at once: a PodDisruptionBudget per role; in
 * the chain shape the API scaled on CPU (an HPA) and the workers on the transition queue, by KEDA
 * asking Prometheus for the metrics every API node serves (docs/operating.md#metrics).
 */
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { type Shape, SITE } from './site.mjs';
import { labelsOf, type RoleName, selectorOf } from './workloads.mjs';

/** A voluntary disruption (a node drained, a cluster upgrade) takes one pod of a role at a time. */
export function disruptionBudget(role: RoleName): PodDisruptionBudget {
  return new PodDisruptionBudget({
    metadata: { name: `pos-${role}`, labels: labelsOf(role) },
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorOf(role) } },
  });
}

/** The API nodes' work is CPU (requests, streams' fan-out): scaled to keep it near 70 % of what they request. */
export function apiAutoscaler(shape: Shape): HorizontalPodAutoscaler | undefined {
  if (shape.api.maxReplicas === undefined) return undefined;
  return new HorizontalPodAutoscaler({
    metadata: { name: 'pos-api', labels: labelsOf('api') },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'pos-api' },
      minReplicas: shape.api.replicas,
      maxReplicas: shape.api.maxReplicas,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ],
      // streams move when a node goes: scale down slowly
      behavior: {
        scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] },
      },
    },
  });
}

/**
 * The workers follow the transition queue: enough of them that each has at most 100 jobs
 * waiting, and more while the oldest waiting job is older than a quarter second (half the
 * default QUEUE_WAIT_TARGET, past which the API starts refusing writes: docs/overload.md).
 * Every API node reports the same shared queue, hence `max`.
 */
export function workerScaler(shape: Shape): ScaledObject | undefined {
  if (shape.worker.maxReplicas === undefined) return undefined;
  return new ScaledObject({
    metadata: { name: 'pos-worker', labels: labelsOf('worker') },
    spec: {
      scaleTargetRef: { name: 'pos-worker' },
      minReplicaCount: shape.worker.replicas,
      maxReplicaCount: shape.worker.maxReplicas,
      pollingInterval: 15,
      cooldownPeriod: 300,
      triggers: [
        {
          type: 'prometheus',
          metricType: 'AverageValue',
          metadata: {
            serverAddress: SITE.prometheusUrl,
            query: 'max(pos_queue_jobs{state="waiting"})',
            threshold: '100',
          },
        },
        {
          type: 'prometheus',
          metricType: 'Value',
          metadata: {
            serverAddress: SITE.prometheusUrl,
            query: 'max(pos_queue_oldest_waiting_seconds)',
            threshold: '0.25',
          },
        },
      ],
    },
  });
}
