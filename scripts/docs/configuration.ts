/**
 * docs/configuration.md, rendered from the configuration schema (shared/src/config-schema.ts):
 * one table per section, one row per variable with its default, the form its value takes and
 * its description. Edit the schema, never the page: `npm run docs` writes it and
 * `npm run lint` fails when it differs from what the schema renders (scripts/docs/generators.ts).
 */
import GithubSlugger from 'github-slugger';
import { CONFIG_SECTIONS, type ConfigVariable, DURATION_PATTERN, FLAG_VALUES } from '@pos/shared/config-schema';

/** A value in a code span, in a table cell (GitHub tables end a cell at any `|`, code or not). */
const code = (value: string | number): string => `\`${String(value).replace(/\|/g, '\\|')}\``;

const sameValues = (a: readonly unknown[], b: readonly unknown[]): boolean =>
  a.length === b.length && a.every((value, i) => value === b[i]);

function defaultOf(variable: ConfigVariable): string {
  if (variable.unset !== undefined) return variable.unset;
  return variable.default === '' ? 'none' : code(variable.default);
}

/** The form a value takes, from the variable's schema. */
export function formOf(variable: ConfigVariable): string {
  if (Array.isArray(variable.enum)) {
    if (sameValues(variable.enum, FLAG_VALUES)) return 'flag';
    return `one of ${variable.enum
      .filter((value) => value !== '')
      .map(code)
      .join(', ')}`;
  }
  if (variable.pattern === DURATION_PATTERN.source) {
    return variable.minDuration === undefined ? 'duration' : `duration, at least ${code(variable.minDuration)}`;
  }
  if (variable.type === 'integer') {
    const { minimum: min, maximum: max } = variable;
    if (min !== undefined && max !== undefined) return `integer, ${min} to ${max}`;
    return min === undefined ? 'integer' : `integer, at least ${min}`;
  }
  const parts = ['text'];
  if (variable.minLength !== undefined && variable.minLength > 1)
    parts.push(`of at least ${variable.minLength} characters`);
  if (variable.pattern !== undefined) parts.push(`matching ${code(variable.pattern)}`);
  return parts.join(' ');
}

const cell = (text: string): string => text.replace(/\n/g, ' ');

export function renderConfiguration(): string {
  const sections = Object.entries(CONFIG_SECTIONS);
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from shared/src/config-schema.ts by `npm run docs`: edit the schema, not this page. -->',
    '',
    'Every setting is an environment variable, read once when a process ' +
      'starts; an empty variable counts as unset. A bad',
    'value stops the process with a message that names the bad variables. Each section below is what one part of the',
    'service receives (`shared/src/config.ts`): `config.http` the ' +
      'listeners, `config.mongo` the MongoDB connection, and',
    'so on.',
    '',
    'Durations are written `500ms`, `15s`, `10m`, `12h`, `90d`; a bare number is milliseconds. Flags are `1` or `true`',
    '(on), `0` or `false` (off).',
    '',
    ...sections.map(([, section]) => `- [${section.title}](#${GithubSlugger.slug(section.title)})`),
  ];
  for (const [name, section] of sections) {
    lines.push(
      '',
      `## ${section.title}`,
      '',
      `${section.summary} In the code: \`config.${name}\`.`,
      '',
      '| Variable | Default | Form | Description |',
      '|---|---|---|---|',
    );
    for (const [variable, schema] of Object.entries<ConfigVariable>(section.variables)) {
      lines.push(
        `| ${code(variable)} | ${cell(defaultOf(schema))} | ${formOf(schema)} | ${cell(schema.description)} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
