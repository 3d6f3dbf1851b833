/**
 * `npm run lint:docs` (part of `npm run lint`): fails when a generated doc differs from what
 * `npm run docs` would write now, when a relative link or `#anchor` of a Markdown file in the
 * repository does not resolve, or when the code cites a doc, a part or a rule that does not exist.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { docGenerators } from './generators';
import { checkCitations, checkMarkdownLinks, Finding, Outlines } from './links';

const ROOT = path.resolve(__dirname, '../..');

const SKIPPED_FOLDERS = new Set(['.git', 'node_modules', 'dist', 'coverage']);

/** Files git tracks or would add (new, not ignored), repository-relative; outside a checkout, the tree. */
function repositoryFiles(): string[] {
  try {
    const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
    return out.split('\0').filter((file) => file !== '' && fs.existsSync(path.join(ROOT, file)));
  } catch {
    const walk = (dir: string): string[] =>
      fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : walk(file);
        return entry.isFile() ? [file] : [];
      });
    return walk('');
  }
}

/** Files whose text the citation check reads: not data, images or the lockfile. */
const isText = (file: string) =>
  !/(^|\/)package-lock\.json$|^bench\/results\/|\.(png|jpe?g|gif|ico|woff2?)$/.test(file);

function main(): number {
  const findings: Finding[] = [];
  for (const { doc, render } of docGenerators()) {
    const file = path.join(ROOT, doc);
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    let expected: string | undefined;
    try {
      expected = render(current);
    } catch (err) {
      findings.push({ file: doc, line: 1, message: (err as Error).message });
      continue;
    }
    if (current !== expected)
      findings.push({ file: doc, line: 1, message: 'out of date with its sources: run `npm run docs`' });
  }
  const files = repositoryFiles();
  const markdown = files.filter((file) => file.endsWith('.md'));
  const outlines = new Outlines();
  findings.push(...checkMarkdownLinks(ROOT, markdown, outlines));
  for (const file of files.filter(isText))
    findings.push(...checkCitations(ROOT, file, fs.readFileSync(path.join(ROOT, file), 'utf8'), outlines));

  for (const f of findings) process.stderr.write(`${f.file}:${f.line}: ${f.message}\n`);
  if (findings.length > 0) {
    process.stderr.write(`docs: ${findings.length} problem(s)\n`);
    return 1;
  }
  process.stdout.write(
    `docs: ${markdown.length} Markdown files, their links and anchors resolve; generated docs up to date\n`,
  );
  return 0;
}

process.exitCode = main();
