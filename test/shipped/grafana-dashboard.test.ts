/**
 * deploy/grafana/pos-dashboard.json: Grafana's current schema (timeseries and stat panels, a
 * data source variable every query uses), built on rules.yml's recording rules, with a row for
 * each part the on-call looks at.
 */
import { dashboardExprs, loadDashboard, loadRules, recordingsIn } from '../support/prometheus';

const dashboard = loadDashboard();

describe('the Grafana dashboard', () => {
  it('is in the current schema, its panels timeseries and stat on the data source variable', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
    expect(panels.length).toBeGreaterThan(0);
    for (const panel of panels) {
      expect({ title: panel.title, type: panel.type }).toEqual({
        title: panel.title,
        type: expect.stringMatching(/^(timeseries|stat)$/),
      });
      expect({ title: panel.title, datasource: panel.datasource }).toEqual({
        title: panel.title,
        datasource: { type: 'prometheus', uid: '${datasource}' },
      });
      expect({ title: panel.title, queries: (panel.targets ?? []).length > 0 }).toEqual({
        title: panel.title,
        queries: true,
      });
    }
  });

  it('has the rows the issue lists', () => {
    const rows = dashboard.panels.filter((panel) => panel.type === 'row').map((panel) => panel.title);
    expect(rows).toEqual([
      'Overview',
      'Requests by route family',
      'Queue and workers',
      'Streams',
      'MongoDB and Redis',
      'Lifecycle',
      'Presence (issue 21)',
      'Webhooks (issue 23)',
      'Overload (issue 31)',
    ]);
  });

  it('is built on recording rules that rules.yml defines', () => {
    const recorded = new Set(loadRules().flatMap((rule) => (rule.record ? [rule.record] : [])));
    const used = new Set(dashboardExprs(dashboard).flatMap(recordingsIn));
    expect([...used].filter((name) => !recorded.has(name))).toEqual([]);
    // the dashboard is built on them: most of its queries read one
    const exprs = dashboardExprs(dashboard);
    expect(exprs.filter((expr) => recordingsIn(expr).length > 0).length).toBeGreaterThan(exprs.length * 0.8);
  });
});
