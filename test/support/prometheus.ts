/**
 * The shipped Prometheus rules, scrape configuration and Grafana dashboard (deploy/), and
 * Debian's `prometheus` and `promtool` (installed by `scripts/setup.sh --test`) to run them. A
 * missing binary fails the tests that need it, as a missing nginx does the gateway's.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { ChildServer, freePort, startChildServer } from '../../scripts/embedded/child-server';
import { ROOT } from '../../scripts/embedded/spawn-role';

export const PROMETHEUS_DIR = path.join(ROOT, 'deploy/prometheus');
export const RULES_FILE = path.join(PROMETHEUS_DIR, 'rules.yml');
export const RULES_TEST_FILE = path.join(PROMETHEUS_DIR, 'rules.test.yml');
export const SCRAPE_CONFIG_FILE = path.join(PROMETHEUS_DIR, 'prometheus.yml');
export const DASHBOARD_FILE = path.join(ROOT, 'deploy/grafana/pos-dashboard.json');

/** A binary of Debian's prometheus package, on PATH or where the package puts it. */
function binary(name: string): string {
  return [`/usr/bin/${name}`].find((candidate) => fs.existsSync(candidate)) ?? name;
}

export const PROMTOOL = binary('promtool');
export const PROMETHEUS = binary('prometheus');

/** `promtool` with these arguments: its exit code and everything it wrote. */
export function promtool(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL, args, { cwd: PROMETHEUS_DIR, encoding: 'utf8', timeout: 60_000 });
  if (run.error)
    throw new Error(`could not run ${PROMTOOL} (scripts/setup.sh --test installs it): ${run.error.message}`);
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function loadRules(): Rule[] {
  const file = parse(fs.readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: Rule[] }[] };
  return file.groups.flatMap((group) => group.rules);
}

export interface AlertRuleTest {
  eval_time: string;
  alertname: string;
  exp_alerts?: unknown[];
}

export function loadAlertRuleTests(): AlertRuleTest[] {
  const file = parse(fs.readFileSync(RULES_TEST_FILE, 'utf8')) as { tests: { alert_rule_test?: AlertRuleTest[] }[] };
  return file.tests.flatMap((test) => test.alert_rule_test ?? []);
}

/**
 * Metric names a PromQL expression reads: identifiers not part of a recording rule's
 * `level:metric:operation` name, a label matcher, a function or a keyword. Enough for the
 * expressions written here (metric names are `pos_*` and `up`).
 */
export function metricsIn(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...withoutStrings.matchAll(/(?<![\w:])(pos_[a-z0-9_]+|up)(?![\w:(])/g)].map((m) => m[1]!);
}

/** Recording rule names (`level:metric:operation`) an expression reads. */
export function recordingsIn(expr: string): string[] {
  return [...expr.matchAll(/(?<![\w:])([a-z_]+:[a-z0-9_]+:[a-z0-9_]+)/g)].map((m) => m[1]!);
}

export interface ScrapeTargets {
  /** API nodes (host:port) and the admin token their /metrics takes. */
  api: string[];
  adminToken: string;
  /** Workers' METRICS_PORT listeners (host:port). */
  workers: string[];
}

export interface RunningPrometheus {
  url: string;
  stop(): Promise<void>;
}

/**
 * Debian's Prometheus with the shipped prometheus.yml and rules.yml: the scrape jobs and their
 * settings as written, with the targets and the token replaced, and scrapes and rule evaluations
 * every second. Its storage and configuration live in a temporary folder removed on stop.
 */
export async function startPrometheus(targets: ScrapeTargets): Promise<RunningPrometheus> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prometheus-'));
  const config = parse(fs.readFileSync(SCRAPE_CONFIG_FILE, 'utf8')) as {
    global: Record<string, string>;
    rule_files: string[];
    scrape_configs: {
      job_name: string;
      authorization?: Record<string, string>;
      static_configs: { targets: string[] }[];
    }[];
  };
  config.global = { ...config.global, scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' };
  config.rule_files = config.rule_files.map((file) => path.resolve(PROMETHEUS_DIR, file));
  const job = (name: string) => {
    const found = config.scrape_configs.find((c) => c.job_name === name);
    if (!found) throw new Error(`${SCRAPE_CONFIG_FILE} has no scrape job ${name}`);
    return found;
  };
  const api = job('pos-api');
  api.static_configs = [{ targets: targets.api }];
  const tokenFile = path.join(dir, 'admin-token');
  fs.writeFileSync(tokenFile, targets.adminToken);
  if (!api.authorization?.credentials_file) throw new Error('pos-api sends no credentials_file');
  api.authorization.credentials_file = tokenFile;
  job('pos-worker').static_configs = [{ targets: targets.workers }];
  const configFile = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(configFile, stringify(config));

  const port = await freePort();
  let server: ChildServer;
  try {
    server = await startChildServer(
      PROMETHEUS,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        // its ready line is an info line
        '--log.level=info',
      ],
      /msg="Server is ready to receive web requests\."/,
      () => `http://127.0.0.1:${port}`,
      30_000,
    );
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: server.url,
    async stop() {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrometheusAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing' | 'inactive';
}

/** Prometheus's /api/v1/alerts: the alerts pending or firing now. */
export async function alertsOf(prometheus: RunningPrometheus): Promise<PrometheusAlert[]> {
  const res = await fetch(`${prometheus.url}/api/v1/alerts`);
  if (!res.ok) throw new Error(`/api/v1/alerts answered ${res.status}`);
  return ((await res.json()) as { data: { alerts: PrometheusAlert[] } }).data.alerts;
}

/** An instant query's series: their labels and values. */
export async function queryOf(
  prometheus: RunningPrometheus,
  query: string,
): Promise<{ metric: Record<string, string>; value: number }[]> {
  const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(query)}`);
  if (!res.ok) throw new Error(`query ${query} answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as {
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}

export interface DashboardPanel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; datasource?: { type: string; uid: string } }[];
}

export interface Dashboard {
  schemaVersion: number;
  templating: { list: { name: string; type: string; query?: string }[] };
  panels: DashboardPanel[];
}

export function loadDashboard(): Dashboard {
  return JSON.parse(fs.readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Every PromQL expression of the dashboard's panels. */
export function dashboardExprs(dashboard: Dashboard = loadDashboard()): string[] {
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
}
