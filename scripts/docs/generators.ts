/**
 * The generated docs: one generator module per document. `npm run docs` writes them and
 * `npm run lint:docs` fails when one differs from what its generator would write now.
 */
import { renderBenchmarks } from './benchmarks';
import { renderConfiguration } from './configuration';
import { generatedSection, renderOperatorAccess } from './operator-access';

export interface DocGenerator {
  /** Repository-relative path of the document. */
  doc: string;
  /**
   * Its whole text, from the sources it is generated from (and, for a page
   * with a generated section, its current text).
   */
  render(current: string | undefined): string;
}

export function docGenerators(): DocGenerator[] {
  return [
    { doc: 'docs/benchmarks.md', render: () => renderBenchmarks() },
    { doc: 'docs/configuration.md', render: () => renderConfiguration() },
    {
      doc: 'docs/operators.md',
      render: (current) => generatedSection(current, 'operator-access', renderOperatorAccess()),
    },
  ];
}
