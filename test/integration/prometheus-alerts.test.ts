/**
 * Debian's Prometheus with the shipped scrape configuration and rules, scraping an API node
 * and a worker every second: the recording rules read what the nodes serve, and once the worker
 * is killed the role-down alerts for it become pending (their `for:` is minutes; pending shows
 * the rule matched what a dead worker leaves).
 */
import { registerAt } from '../support/fixtures';
import { sampleRows, statusUpdate } from '../support/http';
import { spawnRole, useStack, ChildRole } from '../support/stack';
import { alertsOf, PrometheusAlert, queryOf, RunningPrometheus, startPrometheus } from '../support/prometheus';
import { eventually } from '../support/wait';

describe('the shipped alert rules on a running deployment', () => {
  const stack = useStack({}, { worker: false });
  let worker: ChildRole;
  let workerTarget: string;
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    worker = await spawnRole('worker', { ...stack.env, METRICS_PORT: '0' });
    workerTarget = `127.0.0.1:${/"metricsPort":(\d+)/.exec(worker.output())![1]}`;
    prometheus = await startPrometheus({
      api: [new URL(stack.operatorOrigin).host],
      adminToken: stack.env.ADMIN_TOKEN!,
      workers: [workerTarget],
    });
  });
  afterAll(async () => {
    await prometheus?.stop();
    await worker?.kill();
  });

  const workerDown = (alerts: PrometheusAlert[]) =>
    alerts.filter(
      (a) => a.labels.job === 'pos-worker' && ['PosInstanceDown', 'PosRoleDown'].includes(a.labels.alertname!),
    );

  it('scrapes both roles (the API with the admin token) and raises no role alert while they run', async () => {
    let up: Awaited<ReturnType<typeof queryOf>> = [];
    await eventually(
      async () => {
        up = await queryOf(prometheus, 'up');
        return up.length === 2 && up.every((s) => s.value === 1);
      },
      'both targets scraped',
      20_000,
      () => JSON.stringify(up),
    );
    // the API's own readiness reaches Prometheus, and the rules read it
    await eventually(
      async () => (await queryOf(prometheus, 'pos_ready')).some((s) => s.value === 1),
      'pos_ready scraped',
      20_000,
    );
    expect(workerDown(await alertsOf(prometheus))).toEqual([]);
  });

  it("records a status update as the rules expect: the job name as `exported_job` (the scrape job's `job` wins), the route in the register family", async () => {
    const { key, locationId } = await registerAt(stack, 'Scraped');
    const order = await stack.admin.createOrder(locationId, sampleRows);
    const done = await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED');
    expect(done.status).toBe(200);
    const finished = () =>
      queryOf(prometheus, 'exported_job_status:pos_jobs_processed:rate5m{exported_job="order-action"}');
    await eventually(
      async () => (await finished()).length > 0,
      "the worker's finished job recorded by exported_job",
      20_000,
    );
    // and the status update counts in the register family
    await eventually(
      async () => (await queryOf(prometheus, 'family:pos_http_requests:rate5m{family="register"}')).length > 0,
      'the register family recorded',
      20_000,
    );
  });

  it('raises PosInstanceDown and PosRoleDown for the worker once it is killed', async () => {
    await worker.kill();
    let alerts: PrometheusAlert[] = [];
    await eventually(
      async () => {
        alerts = workerDown(await alertsOf(prometheus));
        return alerts.length === 2;
      },
      'the worker-down alerts pending or firing',
      30_000,
      () => JSON.stringify(alerts),
    );
    for (const alert of alerts) expect(alert.state).toMatch(/^(pending|firing)$/);
    expect(alerts.find((a) => a.labels.alertname === 'PosInstanceDown')?.labels.instance).toBe(workerTarget);
    expect(alerts.find((a) => a.labels.alertname === 'PosRoleDown')?.annotations.summary).toBe(
      'No pos-worker instance answers: the role is down',
    );
    // the API still answers: its role is not down
    expect(
      (await alertsOf(prometheus)).filter((a) => a.labels.job === 'pos-api' && a.labels.alertname === 'PosRoleDown'),
    ).toEqual([]);
  });
});
