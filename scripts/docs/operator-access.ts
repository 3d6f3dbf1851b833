/**
 * The access table of docs/operators.md, rendered from the operation table
 * (shared/src/openapi/operations.ts): for every operator operation, the least role that may call
 * it and what an operator bound to locations may do with it, as the OpenAPI document says
 * (`x-roles`, `x-bound`). The rest of the page is written by hand; this section is replaced
 * between its markers (generatedSection).
 */
import { OPERATIONS } from '@pos/shared/openapi/operations';

/** What a bound operator may do, in a table cell. */
function boundCell(bound: 'chain' | 'locations', note: string | undefined, path: string): string {
  if (bound === 'chain') return 'refused (403): chain-wide';
  return (
    note ??
    (/\{(id|sessionId)\}/.test(path) ? 'its own locations only; another answers 404' : 'within its own locations')
  ).replace(/\|/g, '\\|');
}

export function renderOperatorAccess(): string {
  const rows = OPERATIONS.filter((op) => op.access === 'admin' || op.access === 'board').map(
    (op) =>
      `| \`${op.method.toUpperCase()} ${op.path}\` | ${op.summary} | ` +
      `\`${op.role}\` | ${boundCell(op.bound!, op.boundNote, op.path)} |`,
  );
  return ['| Operation | | Least role | An operator bound to locations |', '|---|---|---|---|', ...rows].join('\n');
}

/**
 * `text` with the part between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` replaced by
 * `body`; the markers must be there, once each.
 */
export function generatedSection(text: string | undefined, name: string, body: string): string {
  const open = `<!-- generated:${name} (npm run docs, from shared/src/openapi/operations.ts): do not edit -->`;
  const close = `<!-- /generated:${name} -->`;
  const start = text?.indexOf(open) ?? -1;
  const end = text?.indexOf(close) ?? -1;
  if (text === undefined || start < 0 || end < start) throw new Error(`the page has no ${open} ... ${close} section`);
  return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
}
