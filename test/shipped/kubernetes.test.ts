/**
 * deploy/kubernetes: the manifests of both shapes are what their source makes, every object
 * validates against the Kubernetes, KEDA and prometheus-operator schemas (the kubernetes-models
 * packages, run as deploy/kubernetes/generate/validate.mts), the PrometheusRule is
 * deploy/prometheus/rules.yml, and what the pods are told matches the service: every variable is
 * one the configuration schema defines, secrets come from the Secret only, ports are the
 * listeners', the grace period covers the drain, and only the public port is public. The drain
 * itself, and the probes answering, are test/integration/kubernetes-drain.test.ts.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { envSchema } from '@pos/shared/config-schema';
import { ROOT } from '../support/stack';

const K8S = path.join(ROOT, 'deploy/kubernetes');
const SHAPES = ['single-node', 'chain'];
const SECRET_NAMES = [
  'MONGO_URL',
  'REDIS_URL',
  'ADMIN_TOKEN',
  'API_KEY_SECRET',
  'API_KEY_SECRET_PREVIOUS',
  'WEBHOOK_SECRET_KEY',
];

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; spec: any };
const tsx = (script: string, ...args: string[]) =>
  spawnSync(path.join(ROOT, 'node_modules/.bin/tsx'), [path.join(K8S, 'generate', script), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });

function objectsOf(shape: string): Manifest[] {
  return fs
    .readdirSync(path.join(K8S, shape))
    .flatMap((file) =>
      YAML.parseAllDocuments(fs.readFileSync(path.join(K8S, shape, file), 'utf8')).map((doc) => doc.toJS() as Manifest),
    );
}
const find = (objects: Manifest[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name)!;
const containerOf = (objects: Manifest[], role: string) =>
  find(objects, 'Deployment', `pos-${role}`).spec.template.spec.containers[0];
const envValue = (container: any, name: string): string | undefined =>
  container.env.find((e: any) => e.name === name)?.value;
const seconds = (duration: string) => Number(/^(\d+)s$/.exec(duration)![1]);

describe('the Kubernetes manifests', () => {
  it('are what deploy/kubernetes/generate makes (npm run kubernetes)', () => {
    const check = tsx('main.mts', '--check');
    expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('validate against the schemas of Kubernetes, KEDA and prometheus-operator; a broken one does not', () => {
    const run = tsx('validate.mts');
    const results = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { file: string; type: string; error?: string });
    expect(results.filter((r) => r.error)).toEqual([]);
    expect(run.status).toBe(0);
    const typesOf = (shape: string) =>
      new Set(results.filter((r) => r.file.startsWith(`${shape}/`)).map((r) => r.type));
    expect([...typesOf('chain')].sort()).toEqual([
      'apps/v1 Deployment',
      'autoscaling/v2 HorizontalPodAutoscaler',
      'keda.sh/v1alpha1 ScaledObject',
      'monitoring.coreos.com/v1 PrometheusRule',
      'monitoring.coreos.com/v1 ServiceMonitor',
      'networking.k8s.io/v1 Ingress',
      'networking.k8s.io/v1 NetworkPolicy',
      'policy/v1 PodDisruptionBudget',
      'v1 Service',
    ]);
    expect([...typesOf('single-node')].filter((type) => /Autoscaler|ScaledObject/.test(type))).toEqual([]);

    const broken = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-')), 'broken.yaml');
    const api = YAML.stringify({
      ...find(objectsOf('chain'), 'Deployment', 'pos-api'),
      spec: { ...find(objectsOf('chain'), 'Deployment', 'pos-api').spec, replicas: 'three' },
    });
    fs.writeFileSync(broken, api);
    const refused = tsx('validate.mts', broken);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toContain('replicas must be integer');
  });

  it('are read as kubectl reads them (YAML 1.1): every string that 1.1 would take for a boolean or a number is quoted', () => {
    for (const shape of SHAPES) {
      for (const file of fs.readdirSync(path.join(K8S, shape))) {
        const text = fs.readFileSync(path.join(K8S, shape, file), 'utf8');
        const as11 = YAML.parseAllDocuments(text, { version: '1.1' }).map((doc) => doc.toJS());
        const as12 = YAML.parseAllDocuments(text).map((doc) => doc.toJS());
        expect(`${shape}/${file}: ${JSON.stringify(as11) === JSON.stringify(as12)}`).toBe(`${shape}/${file}: true`);
      }
    }
    // an annotation written unquoted, as the Ingress once was, is refused
    const ingress = find(objectsOf('chain'), 'Ingress', 'pos');
    const unquoted = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-')), 'network.yaml');
    fs.writeFileSync(unquoted, YAML.stringify(ingress).replace(/proxy-buffering: "?off"?/, 'proxy-buffering: off'));
    const refused = tsx('validate.mts', unquoted);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toContain('proxy-buffering must be string');
  });

  it.each(SHAPES)('%s: the PrometheusRule is deploy/prometheus/rules.yml', (shape) => {
    const rules = YAML.parse(fs.readFileSync(path.join(ROOT, 'deploy/prometheus/rules.yml'), 'utf8'));
    expect(find(objectsOf(shape), 'PrometheusRule', 'pos').spec).toEqual({ groups: rules.groups });
  });

  it.each(SHAPES)(
    '%s: names only variables the configuration schema defines, and takes every secret from the Secret',
    (shape) => {
      const known = new Set(Object.keys(envSchema.properties));
      for (const role of ['api', 'worker']) {
        const env: any[] = containerOf(objectsOf(shape), role).env;
        expect(env.map((e) => e.name).filter((name) => !known.has(name))).toEqual([]);
        for (const e of env.filter((e) => SECRET_NAMES.includes(e.name))) {
          expect({ name: e.name, value: e.value, key: e.valueFrom?.secretKeyRef?.key }).toEqual({
            name: e.name,
            value: undefined,
            key: e.name,
          });
        }
        expect(env.filter((e) => e.valueFrom).every((e) => SECRET_NAMES.includes(e.name))).toBe(true);
      }
      expect(containerOf(objectsOf(shape), 'api').env.map((e: any) => e.name)).toEqual(
        expect.arrayContaining(['ADMIN_TOKEN', 'API_KEY_SECRET', 'WEBHOOK_SECRET_KEY']),
      );
      expect(containerOf(objectsOf(shape), 'worker').env.map((e: any) => e.name)).toEqual(
        expect.arrayContaining(['WEBHOOK_SECRET_KEY']),
      );
    },
  );

  it.each(SHAPES)(
    "%s: ports are the listeners', probes the processes' own, and the grace period covers the drain",
    (shape) => {
      const objects = objectsOf(shape);
      const api = containerOf(objects, 'api');
      const worker = containerOf(objects, 'worker');
      const portOf = (container: any, name: string) => container.ports.find((p: any) => p.name === name).containerPort;
      expect(String(portOf(api, 'http'))).toBe(envValue(api, 'PORT'));
      expect(String(portOf(api, 'admin'))).toBe(envValue(api, 'ADMIN_PORT'));
      expect(String(portOf(worker, 'metrics'))).toBe(envValue(worker, 'METRICS_PORT'));
      expect([api.livenessProbe.httpGet, api.readinessProbe.httpGet]).toEqual([
        { path: '/healthz', port: 'http' },
        { path: '/readyz', port: 'http' },
      ]);
      expect(worker.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });

      const preStop = Number(api.lifecycle.preStop.exec.command[1]);
      for (const [role, container] of [
        ['api', api],
        ['worker', worker],
      ] as const) {
        const pod = find(objects, 'Deployment', `pos-${role}`).spec.template.spec;
        const before = role === 'api' ? preStop : 0;
        expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
          before + seconds(envValue(container, 'SHUTDOWN_GRACE')!) + 10,
        );
        expect(pod.automountServiceAccountToken).toBe(false);
        expect(pod.securityContext.runAsNonRoot).toBe(true);
        expect(container.securityContext).toMatchObject({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
        });
        expect(container.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
        expect(container.resources.limits).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      }
    },
  );

  it.each(SHAPES)(
    '%s: the ingress reaches the public port alone; the operator port and /metrics only Prometheus and operator pods',
    (shape) => {
      const objects = objectsOf(shape);
      const api = containerOf(objects, 'api');
      const service = find(objects, 'Service', 'pos-api');
      const ingress = find(objects, 'Ingress', 'pos');
      const backends = ingress.spec.rules.flatMap((rule: any) => rule.http.paths.map((p: any) => p.backend.service));
      expect(backends).toEqual([{ name: 'pos-api', port: { name: 'http' } }]);
      expect(service.spec.ports.find((p: any) => p.name === 'http').targetPort).toBe('http');
      expect(ingress.spec.tls).toEqual([{ hosts: [ingress.spec.rules[0].host], secretName: expect.any(String) }]);

      const policy = find(objects, 'NetworkPolicy', 'pos-api').spec;
      const admitted = (port: number) =>
        policy.ingress
          .filter((rule: any) => rule.ports.some((p: any) => p.port === port))
          .flatMap((rule: any) => rule.from);
      const ingressNamespace = (from: any) => from.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'];
      expect(admitted(Number(envValue(api, 'PORT'))).map(ingressNamespace)).toEqual(['ingress-nginx']);
      expect(admitted(Number(envValue(api, 'ADMIN_PORT'))).map(ingressNamespace)).not.toContain('ingress-nginx');
      const workerPolicy = find(objects, 'NetworkPolicy', 'pos-worker').spec;
      expect(workerPolicy.ingress.flatMap((rule: any) => rule.from).map(ingressNamespace)).toEqual(['monitoring']);
    },
  );
});
