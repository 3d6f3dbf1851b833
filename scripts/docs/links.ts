/**
 * The docs' link checks: every relative link and `#anchor` of a Markdown file resolves inside the
 * repository, and every citation of a doc in the code (`docs/security.md#api-keys`,
 * `docs/register-interface.md, part 5 rule 4`) lands on something that exists.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MarkdownOutline, outlineOf } from './markdown';

export interface Finding {
  /** Repository-relative path of the file that holds the broken link. */
  file: string;
  line: number;
  message: string;
}

/** A scheme (`https:`, `mailto:`) or a protocol-relative `//host`: not this repository's to check. */
const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/** Reads and outlines Markdown files once each, by absolute path. */
export class Outlines {
  private readonly cache = new Map<string, MarkdownOutline>();

  of(file: string): MarkdownOutline {
    let outline = this.cache.get(file);
    if (!outline) {
      outline = outlineOf(fs.readFileSync(file, 'utf8'));
      this.cache.set(file, outline);
    }
    return outline;
  }
}

const decode = (value: string) => {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
};

/**
 * Why `href`, written in `fromFile`, does not resolve; undefined when it does (or is external).
 * A path is relative to the file's folder (`/` to the repository's root); an anchor must be one
 * of the target's when the target is Markdown.
 */
export function brokenLink(root: string, fromFile: string, href: string, outlines: Outlines): string | undefined {
  if (href === '') return 'empty link';
  if (EXTERNAL.test(href)) return undefined;
  const hash = href.indexOf('#');
  const pathPart = decode((hash < 0 ? href : href.slice(0, hash)).replace(/\?.*$/, ''));
  const anchor = hash < 0 ? undefined : decode(href.slice(hash + 1));
  const target =
    pathPart === ''
      ? fromFile
      : path.resolve(pathPart.startsWith('/') ? root : path.dirname(fromFile), pathPart.replace(/^\/+/, ''));
  const relative = path.relative(root, target);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return `${href}: outside the repository`;
  if (!fs.existsSync(target)) return `${href}: no such file ${relative}`;
  if (anchor === undefined || anchor === '' || !target.endsWith('.md') || !fs.statSync(target).isFile())
    return undefined;
  if (!outlines.of(target).anchors.has(anchor)) return `${href}: no heading or anchor #${anchor} in ${relative}`;
  return undefined;
}

/** Every broken relative link and anchor of the given Markdown files (repository-relative paths). */
export function checkMarkdownLinks(root: string, files: string[], outlines = new Outlines()): Finding[] {
  const findings: Finding[] = [];
  for (const file of files) {
    const absolute = path.join(root, file);
    for (const link of outlines.of(absolute).links) {
      const problem = brokenLink(root, absolute, link.href, outlines);
      if (problem) findings.push({ file, line: link.line, message: problem });
    }
  }
  return findings;
}

/** `docs/<name>.md`, with an optional `#anchor`, as code and comments cite a doc. */
const DOC_CITATION = /(?<![\w/.-])(docs\/[\w./-]*?\.md)(#[\w-]+)?/g;
/** "docs/register-interface.md, part 5 rule 4", "…, part 4.2, rule 1", "…, part 5, rules 4 and 5". */
const PART_CITATION =
  /docs\/register-interface\.md,?\s+part\s+(\d+(?:\.\d+)?)(?:,?\s+rules?\s+(\d+)(?:\s+and\s+(\d+))?)?/gi;
/** The spec files outside the repository, which a clone does not have. */
const OUTSIDE = /\.\.\/shared\/spec\/|(?<![\w@/])shared\/spec\//;

/** The register interface's part of a heading: "Part 5: Authentication" is 5, "4.2 Update …" is 4.2. */
export function partOfHeading(text: string): string | undefined {
  return /^Part (\d+)\b/.exec(text)?.[1] ?? /^(\d+\.\d+)\s/.exec(text)?.[1];
}

/** Which parts, and which numbered rules of each part, the register interface doc has. */
export function interfaceParts(outline: MarkdownOutline): Map<string, Set<number>> {
  const parts = new Map<string, Set<number>>();
  for (const heading of outline.headings) {
    const part = partOfHeading(heading.text);
    if (part) parts.set(part, new Set());
  }
  for (const item of outline.numberedItems) {
    // the rule belongs to the nearest heading above it that names a part
    const above = outline.headings.filter((h) => h.line <= item.line && partOfHeading(h.text)).at(-1);
    if (above) parts.get(partOfHeading(above.text)!)!.add(item.number);
  }
  return parts;
}

/**
 * Citations of the docs in the lines of a non-Markdown file: the doc exists, its anchor too, and
 * a part and rule of the register interface are in it. Also: no reference to the spec files
 * outside the repository.
 */
export function checkCitations(root: string, file: string, text: string, outlines = new Outlines()): Finding[] {
  const findings: Finding[] = [];
  text.split('\n').forEach((content, i) => {
    const line = i + 1;
    if (OUTSIDE.test(content))
      findings.push({ file, line, message: 'cites the spec outside the repository: cite docs/register-interface.md' });
    for (const match of content.matchAll(DOC_CITATION)) {
      const problem = brokenLink(root, path.join(root, 'README.md'), `${match[1]}${match[2] ?? ''}`, outlines);
      if (problem) findings.push({ file, line, message: problem });
    }
    for (const match of content.matchAll(PART_CITATION)) {
      const doc = path.join(root, 'docs/register-interface.md');
      if (!fs.existsSync(doc)) continue; // reported above
      const parts = interfaceParts(outlines.of(doc));
      const [, part, ...rules] = match;
      const rulesOfPart = parts.get(part!);
      if (!rulesOfPart) {
        findings.push({ file, line, message: `${match[0]}: docs/register-interface.md has no part ${part}` });
        continue;
      }
      for (const rule of rules.filter((r): r is string => r !== undefined)) {
        if (!rulesOfPart.has(Number(rule)))
          findings.push({
            file,
            line,
            message: `${match[0]}: part ${part} of docs/register-interface.md has no rule ${rule}`,
          });
      }
    }
  });
  return findings;
}
