import { CONFIG_SECTIONS } from '@pos/shared/config-schema';
import { renderConfiguration } from '../../scripts/docs/configuration';

/** The page's tables: each `## ` heading with the rows under it, cut into cells. */
function tables(page: string): Map<string, string[][]> {
  const result = new Map<string, string[][]>();
  let rows: string[][] | undefined;
  for (const line of page.split('\n')) {
    if (line.startsWith('## ')) result.set(line.slice(3), (rows = []));
    else if (rows && line.startsWith('| `'))
      rows.push(
        line
          .slice(2, -2)
          .split(/(?<!\\)\|/)
          .map((cell) => cell.trim()),
      );
  }
  return result;
}

describe('docs/configuration.md, rendered from the configuration schema', () => {
  const page = renderConfiguration();
  const rows = tables(page);
  const row = (name: string) => [...rows.values()].flat().find((cells) => cells[0] === `\`${name}\``);

  it('has one table per section, one row per variable in the schema order', () => {
    expect([...rows.keys()]).toEqual(Object.values(CONFIG_SECTIONS).map((section) => section.title));
    for (const section of Object.values(CONFIG_SECTIONS)) {
      expect(rows.get(section.title)!.map((cells) => cells[0])).toEqual(
        Object.keys(section.variables).map((name) => `\`${name}\``),
      );
    }
  });

  it('gives each variable its default, or what leaving it out means, its form and its description', () => {
    expect(row('PORT')).toEqual([
      '`PORT`',
      '`8080`',
      'integer, 0 to 65535',
      CONFIG_SECTIONS.http.variables.PORT.description,
    ]);
    expect(row('MONGO_URL')?.[1]).toMatch(/^required by the API and the worker/);
    expect(row('API_KEY_SECRET')?.slice(1, 3)).toEqual([
      'required by the API; `npm start` generates one',
      'text of at least 32 characters matching `^[^,\\s]*$`',
    ]);
    expect(row('HTTP_HEADERS_TIMEOUT')?.slice(1, 3)).toEqual(['`10s`', 'duration, at least `1s`']);
    expect(row('HTTP_MAX_CONNECTIONS')?.slice(1, 3)).toEqual([
      '`SSE_MAX_STREAMS` + 1024: every stream, and room for requests',
      'integer, at least 1',
    ]);
    expect(row('LIFECYCLE_INTERVAL')?.slice(1, 3)).toEqual(['`1m`', 'duration, at least `1s`']);
    expect(row('REDIS_COMMAND_TIMEOUT')?.[2]).toBe('duration, at least `100ms`');
    expect(row('TRUST_PROXY')?.slice(1, 3)).toEqual(['`0`', 'flag']);
    expect(row('SESSION_CACHE_SIZE')?.[2]).toBe('integer, at least 0');
    expect(row('LOG_LEVEL')?.[2]).toBe('one of `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`');
    expect(row('FAULT_INJECT')?.slice(1, 3)).toEqual([
      'none',
      'one of `crash-before-apply`, `crash-after-apply`, `crash-after-answer`, `crash-mid-archive`, `crash-after-overdue-mark`, `crash-after-location-change`',
    ]);
    // a `|` inside a cell is escaped, or the table would gain a column
    expect(row('MONGO_WRITE_CONCERN')?.[2]).toBe('text matching `^(majority\\|[1-9][0-9]*)$`');
    for (const cells of [...rows.values()].flat()) expect(cells).toHaveLength(4);
  });

  it('links each section from its contents to its heading', () => {
    const anchors = [...page.matchAll(/^- \[[^\]]+\]\(#([^)]+)\)$/gm)].map((match) => match[1]);
    expect(anchors).toEqual([
      'http-listeners',
      'mongodb',
      'redis',
      'transition-queue',
      'overload',
      'worker',
      'admin-token-api-keys-and-sessions',
      'limits',
      'event-streams',
      'idempotency-keys',
      'orders-and-commands',
      'order-lifecycle',
      'presence-and-pause',
      'menus',
      'order-deadlines',
      'tracing-opentelemetry',
      'webhooks-and-the-event-feed',
      'operators-and-audit',
      'processes',
    ]);
  });
});
