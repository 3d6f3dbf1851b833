/**
 * Every metric the shipped alert rules (deploy/prometheus/rules.yml) and the Grafana dashboard
 * (deploy/grafana/pos-dashboard.json) read exists on a running API node or worker: a renamed
 * metric would leave an alert silent and a panel empty.
 */
import { adminHeader, call } from '../support/http';
import { dashboardExprs, loadRules, metricsIn } from '../support/prometheus';
import { ChildRole, spawnRole, useStack } from '../support/stack';

/** The series names a /metrics text serves, and the names its `# TYPE` lines declare with their type. */
function exposed(text: string): { samples: Set<string>; types: Map<string, string> } {
  const samples = new Set<string>();
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    else if (line && !line.startsWith('#')) samples.add(/^[^{ ]+/.exec(line)![0]);
  }
  return { samples, types };
}

/**
 * Whether `name` is served: a series of it, or a declared metric (a labelled
 * counter not counted yet, a histogram's buckets).
 */
function serves(text: string, name: string): boolean {
  const { samples, types } = exposed(text);
  if (samples.has(name) || types.has(name)) return true;
  const histogram = /^(.*)_(bucket|sum|count)$/.exec(name);
  return histogram !== null && ['histogram', 'summary'].includes(types.get(histogram[1]!) ?? '');
}

describe('the metrics the alert rules and the dashboard read', () => {
  const stack = useStack({}, { worker: false });
  let worker: ChildRole;
  let texts: string[];

  beforeAll(async () => {
    worker = await spawnRole('worker', { ...stack.env, METRICS_PORT: '0' });
    const workerOrigin = `http://127.0.0.1:${/"metricsPort":(\d+)/.exec(worker.output())![1]}`;
    const api = await call('GET', `${stack.operatorOrigin}/metrics`, { headers: adminHeader(stack.env) });
    const fromWorker = await call('GET', `${workerOrigin}/metrics`);
    expect([api.status, fromWorker.status]).toEqual([200, 200]);
    texts = [api.text, fromWorker.text];
  });
  afterAll(async () => {
    await worker?.stop();
  });

  const used = () => {
    const names = [...loadRules().map((rule) => rule.expr), ...dashboardExprs()].flatMap(metricsIn);
    // `up` is Prometheus's own, per target
    return [...new Set(names)].filter((name) => name !== 'up').sort();
  };

  it('exist on a running API node or worker', () => {
    const missing = used().filter((name) => !texts.some((text) => serves(text, name)));
    expect(missing).toEqual([]);
  });

  it('include the readiness and stream metrics', () => {
    for (const name of ['pos_ready', 'pos_dependency_up', 'pos_streams_ended_total'])
      expect({ name, served: serves(texts[0]!, name) }).toEqual({ name, served: true });
    expect(texts[0]).toMatch(/^pos_ready 1$/m);
    expect(texts[0]).toMatch(/^pos_dependency_up\{dependency="mongodb"\} 1$/m);
    expect(texts[0]).toMatch(/^pos_dependency_up\{dependency="redis"\} 1$/m);
    expect(texts[0]).toMatch(/^pos_streams_ended_total\{reason="slow-client"\} 0$/m);
  });
});
