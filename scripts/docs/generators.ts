/**
 * The generated docs: one generator module per document. `npm run docs` writes them and
 * `npm run lint:docs` fails when one differs from what its generator would write now.
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderBenchmarks } from './benchmarks';

export interface DocGenerator {
  /** Repository-relative path of the document. */
  doc: string;
  /** Its whole text, from the sources it is generated from. */
  render(): string;
}

/**
 * A generator module another change may add (`scripts/docs/<name>.ts` exporting `exportName`);
 * until it exists its document is written by hand and only its links are checked.
 */
function optional(doc: string, name: string, exportName: string): DocGenerator[] {
  if (!['.ts', '.js'].some((ext) => fs.existsSync(path.join(__dirname, `${name}${ext}`)))) return [];
  // required only when present: a static import would fail without it
  const render = (require(`./${name}`) as Record<string, unknown>)[exportName];
  if (typeof render !== 'function') throw new Error(`scripts/docs/${name} does not export ${exportName}()`);
  return [{ doc, render: render as () => string }];
}

export function docGenerators(): DocGenerator[] {
  return [{ doc: 'docs/benchmarks.md', render: renderBenchmarks }, ...optional('docs/configuration.md', 'configuration', 'renderConfiguration')];
}
