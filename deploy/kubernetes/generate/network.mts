/**
 * Who may reach what: the public door is an Ingress (TLS ends there) to the API's public port
 * only, and network policies let the ingress controller alone reach that port, Prometheus and
 * the pods labelled for operator access alone the operator port (admin API, Bull Board,
 * /metrics), and Prometheus alone a worker's /metrics. Egress is left open: MongoDB, Redis and
 * webhook endpoints live outside the namespace.
 */
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { INetworkPolicyPeer as NetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer';
import { PORTS } from './environment.mjs';
import { OPERATOR_ACCESS_LABEL, SITE } from './site.mjs';
import { labelsOf, selectorOf } from './workloads.mjs';

const namespace = (name: string): NetworkPolicyPeer => ({
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } },
});

export function apiPolicy(): NetworkPolicy {
  return new NetworkPolicy({
    metadata: { name: 'pos-api', labels: labelsOf('api') },
    spec: {
      podSelector: { matchLabels: selectorOf('api') },
      policyTypes: ['Ingress'],
      ingress: [
        { from: [namespace(SITE.ingressNamespace)], ports: [{ port: PORTS.http }] },
        {
          from: [
            namespace(SITE.monitoringNamespace),
            { podSelector: { matchLabels: { [OPERATOR_ACCESS_LABEL]: 'true' } } },
          ],
          ports: [{ port: PORTS.admin }],
        },
      ],
    },
  });
}

export function workerPolicy(): NetworkPolicy {
  return new NetworkPolicy({
    metadata: { name: 'pos-worker', labels: labelsOf('worker') },
    spec: {
      podSelector: { matchLabels: selectorOf('worker') },
      policyTypes: ['Ingress'],
      ingress: [{ from: [namespace(SITE.monitoringNamespace)], ports: [{ port: PORTS.metrics }] }],
    },
  });
}

/**
 * The public door, on ingress-nginx: TLS, the limits of deploy/nginx.conf per client address,
 * streams passed on unbuffered for their SSE_TIMEOUT. The controller must also pass the
 * interface's `api_key` header, which nginx drops by default: `enable-underscores-in-headers:
 * "true"` in its ConfigMap (a controller-wide setting, not an annotation).
 */
export function ingress(): Ingress {
  return new Ingress({
    metadata: {
      name: 'pos',
      labels: labelsOf('api'),
      annotations: {
        'nginx.ingress.kubernetes.io/ssl-redirect': 'true',
        'nginx.ingress.kubernetes.io/proxy-body-size': '64k',
        'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
        'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600',
        'nginx.ingress.kubernetes.io/limit-connections': '100',
        'nginx.ingress.kubernetes.io/limit-rps': '50',
        'nginx.ingress.kubernetes.io/limit-burst-multiplier': '2',
      },
    },
    spec: {
      ingressClassName: SITE.ingressClass,
      tls: [{ hosts: [SITE.host], secretName: SITE.tlsSecret }],
      rules: [
        {
          host: SITE.host,
          // the public port only: with ADMIN_PORT set, /admin and /metrics are not served there at all
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'pos-api', port: { name: 'http' } } } },
            ],
          },
        },
      ],
    },
  });
}
