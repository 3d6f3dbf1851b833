/**
 * deploy/prometheus/rules.yml: promtool accepts it and its unit tests (rules.test.yml) pass;
 * every alert has a summary, a runbook in docs/operating.md (the docs lint checks Markdown links
 * only), and unit tests where it fires and where it does not.
 */
import fs from 'node:fs';
import path from 'node:path';
import { outlineOf } from '../../scripts/docs/markdown';
import { ROOT } from '../../scripts/embedded/spawn-role';
import { loadAlertRuleTests, loadRules, promtool, RULES_FILE, RULES_TEST_FILE } from '../support/prometheus';

const alerts = loadRules().filter((rule) => rule.alert !== undefined);

describe('the Prometheus rules', () => {
  it('pass promtool check rules', () => {
    const { status, output } = promtool('check', 'rules', RULES_FILE);
    expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  });

  it('pass their promtool unit tests', () => {
    const { status, output } = promtool('test', 'rules', RULES_TEST_FILE);
    expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  });

  it('give every alert a severity, a summary and a runbook that docs/operating.md has', () => {
    const operating = outlineOf(fs.readFileSync(path.join(ROOT, 'docs/operating.md'), 'utf8'));
    expect(alerts.length).toBeGreaterThan(0);
    for (const alert of alerts) {
      expect({ alert: alert.alert, severity: alert.labels?.severity }).toEqual({
        alert: alert.alert,
        severity: expect.stringMatching(/^(warning|critical)$/),
      });
      expect({ alert: alert.alert, summary: alert.annotations?.summary }).toEqual({
        alert: alert.alert,
        summary: expect.any(String),
      });
      const runbook = /^docs\/operating\.md#([a-z0-9-]+)$/.exec(alert.annotations?.runbook_url ?? '');
      expect({ alert: alert.alert, runbook: runbook?.[1] }).toEqual({
        alert: alert.alert,
        runbook: alert.alert!.toLowerCase(),
      });
      expect({ alert: alert.alert, anchored: operating.anchors.has(runbook![1]!) }).toEqual({
        alert: alert.alert,
        anchored: true,
      });
    }
  });

  it('have unit tests for every alert: where it fires, and where it does not (the `for:` not yet passed, or the case that must not alert)', () => {
    const cases = loadAlertRuleTests();
    const uncovered = alerts
      .map((alert) => alert.alert!)
      .filter((name) => {
        const mine = cases.filter((c) => c.alertname === name);
        return (
          !mine.some((c) => (c.exp_alerts ?? []).length > 0) || !mine.some((c) => (c.exp_alerts ?? []).length === 0)
        );
      });
    expect(uncovered).toEqual([]);
    // and no test of an alert that is gone
    expect(cases.filter((c) => !alerts.some((a) => a.alert === c.alertname))).toEqual([]);
  });
});
