/**
 * The docs' link checker (npm run lint:docs): a relative link to a missing file, or to an anchor
 * no heading makes, is caught; GitHub's anchors (punctuation dropped, duplicates numbered) and
 * HTML anchors resolve; the code's citations of the register interface's parts and rules too.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkCitations, checkMarkdownLinks } from '../../scripts/docs/links';
import { outlineOf } from '../../scripts/docs/markdown';

/** A repository of fixture files in a temporary folder. */
function repository(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-links-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

const GUIDE = [
  '# Guide',
  '',
  '## Rotating the secret',
  '',
  '## The contract: OpenAPI document, `/docs`, `/`',
  '',
  '## Notes',
  '',
  '## Notes',
  '',
  '<a name="part-5-rule-4"></a>',
  '',
].join('\n');

describe('the docs link checker', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
    root = undefined;
  });

  it('finds GitHub-style anchors in a file', () => {
    const anchors = outlineOf(GUIDE).anchors;
    expect([...anchors].sort()).toEqual(
      [
        'guide',
        'notes',
        'notes-1',
        'part-5-rule-4',
        'rotating-the-secret',
        'the-contract-openapi-document-docs-',
      ].sort(),
    );
  });

  it('passes links that resolve: files, folders, anchors, duplicates, HTML anchors, external links', () => {
    root = repository({
      'README.md': [
        '[guide](guide/intro.md) [folder](guide/) [secret](guide/intro.md#rotating-the-secret)',
        '[contract](guide/intro.md#the-contract-openapi-document-docs-) [second notes](guide/intro.md#notes-1)',
        '[rule](guide/intro.md#part-5-rule-4) [here](#readme) [web](https://example.com/x.md#nowhere) <a href="guide/intro.md">html</a>',
        '',
        '## Readme',
      ].join('\n'),
      'guide/intro.md': `${GUIDE}\n[back](../README.md#readme) ![picture](pic.png)\n`,
      'guide/pic.png': 'png',
    });
    expect(checkMarkdownLinks(root!, ['README.md', 'guide/intro.md'])).toEqual([]);
  });

  it('catches a link to a missing file and a link to a missing anchor, with their lines', () => {
    root = repository({
      'README.md': [
        '# Readme',
        '',
        'See [the guide](guide/missing.md).',
        '',
        'And [the secret](guide/intro.md#rotating-the-key).',
        '',
        '[self](#nowhere)',
      ].join('\n'),
      'guide/intro.md': GUIDE,
    });
    expect(checkMarkdownLinks(root!, ['README.md'])).toEqual([
      { file: 'README.md', line: 3, message: 'guide/missing.md: no such file guide/missing.md' },
      {
        file: 'README.md',
        line: 5,
        message: 'guide/intro.md#rotating-the-key: no heading or anchor #rotating-the-key in guide/intro.md',
      },
      { file: 'README.md', line: 7, message: '#nowhere: no heading or anchor #nowhere in README.md' },
    ]);
  });

  it('catches a link out of the repository', () => {
    root = repository({ 'README.md': '[notes](../elsewhere/notes.md)\n' });
    expect(checkMarkdownLinks(root!, ['README.md'])).toEqual([
      { file: 'README.md', line: 1, message: '../elsewhere/notes.md: outside the repository' },
    ]);
  });

  it('checks what the code cites: a doc, its anchor, a part and rule of the register interface', () => {
    const doc = 'docs/register-interface.md';
    root = repository({
      [doc]: [
        '# Register interface',
        '',
        '## Part 5: Authentication',
        '',
        '1. one',
        '2. two',
        '',
        '### 4.2 Update the status',
        '',
        '1. only',
        '',
      ].join('\n'),
    });
    const gone = `${'docs'}/gone.md`; // spelt so that the repository's own citation check does not read it
    const code = [
      `// ${doc}, part 5 rule 2`,
      `// ${doc}, part 4.2, rule 1`,
      `// ${doc}, part 5, rules 1 and 2`,
      `// ${doc}#part-5-authentication`,
      `// ${doc}, part 5 rule 3`,
      `// ${doc}, part 6`,
      `// ${doc}#part-6`,
      `// ${gone}`,
    ].join('\n');
    expect(checkCitations(root!, 'src/code.ts', code).map((f) => `${f.line}: ${f.message}`)).toEqual([
      `5: ${doc}, part 5 rule 3: part 5 of ${doc} has no rule 3`,
      `6: ${doc}, part 6: ${doc} has no part 6`,
      `7: ${doc}#part-6: no heading or anchor #part-6 in ${doc}`,
      `8: ${gone}: no such file ${gone}`,
    ]);
  });
});
