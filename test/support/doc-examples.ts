/**
 * The shell examples of README.md and docs/*.md: every fenced `sh` block, in the order a reader
 * meets them (the README first, then docs/ by name), with what the comment line before it says
 * about running it:
 *
 *   <!-- example: skip: <reason> -->     not run (it starts or installs something; the reason says what)
 * <!-- example: until stopped -->      runs until stopped (an event stream):
 * given a few seconds, it must print something and not fail
 *   <!-- example: background -->        left running (a receiver) while the examples after it run
 *   <!-- example: scratch root -->      runs as written, with DESTDIR set to a scratch folder: what it
 *                                       installs in /etc or /opt lands there (the commands honour DESTDIR)
 *
 * Every other block runs as written and must succeed; an HTTP answer of 400 or more must be one its
 * block names in a comment (`# 401 ...`).
 */
import fs from 'node:fs';
import path from 'node:path';

export type ExampleMode = 'run' | 'skip' | 'until-stopped' | 'background' | 'scratch-root';

export interface Example {
  file: string;
  line: number;
  code: string;
  mode: ExampleMode;
  /** For `skip`: why. */
  reason?: string;
}

const FENCE = /^```(sh|bash|shell)\n([\s\S]*?)^```/gm;
const MARKER = /<!-- example: (skip: (.+?)|until stopped|background|scratch root) -->\s*$/;

export function examplesOf(root: string, file: string): Example[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const examples: Example[] = [];
  for (const match of text.matchAll(FENCE)) {
    const before = text.slice(0, match.index).trimEnd();
    const marker = MARKER.exec(before.slice(before.lastIndexOf('\n') + 1));
    const line = text.slice(0, match.index).split('\n').length;
    const example: Example = { file, line, code: match[2]!, mode: 'run' };
    if (marker?.[1] === 'until stopped') example.mode = 'until-stopped';
    else if (marker?.[1] === 'background') example.mode = 'background';
    else if (marker?.[1] === 'scratch root') example.mode = 'scratch-root';
    else if (marker?.[2]) Object.assign(example, { mode: 'skip', reason: marker[2] });
    examples.push(example);
  }
  return examples;
}

export function allExamples(root: string): Example[] {
  const docs = fs
    .readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].flatMap((file) => examplesOf(root, file));
}

/** The HTTP statuses a block says it expects: numbers of 400 and more in its comments. */
export function expectedStatuses(code: string): Set<number> {
  const statuses = new Set<number>();
  for (const line of code.split('\n')) {
    const comment = line.indexOf('#');
    if (comment < 0) continue;
    for (const [status] of line.slice(comment).matchAll(/\b[45]\d\d\b/g)) statuses.add(Number(status));
  }
  return statuses;
}

/**
 * One bash script that runs the examples in order in one shell (a block's variables are the next
 * one's, as in a reader's terminal), each announced on stderr (`::example <file>:<line>`), each
 * curl's status reported after its output (`::status <code>`), under `set -euo pipefail`.
 * `until stopped` blocks run for `stopAfterS` seconds into a file of their own in `dir`.
 */
export function scriptOf(examples: Example[], dir: string, stopAfterS = 3): string {
  const lines = [
    'set -euo pipefail',
    // every variable is exported: a block run apart (until stopped, in the background) sees them
    'set -a',
    `curl() { command curl -w '%{stderr}::status %{http_code}\\n' "$@"; }`,
    'export -f curl',
    'background=()',
    'trap \'for pid in "${background[@]}"; do kill "$pid" 2>/dev/null || true; done\' EXIT',
  ];
  examples.forEach((example, index) => {
    if (example.mode === 'skip') return;
    const where = `${example.file}:${example.line}`;
    const file = path.join(dir, `example-${index}.sh`);
    fs.writeFileSync(file, `set -euo pipefail\n${example.code}`);
    lines.push(`echo '::example ${where}' >&2`);
    if (example.mode === 'run') lines.push(example.code);
    else if (example.mode === 'scratch-root') lines.push(`DESTDIR=${path.join(dir, `root-${index}`)} bash ${file}`);
    else if (example.mode === 'background') lines.push(`bash ${file} > ${file}.out 2>&1 & background+=($!)`, 'sleep 2');
    else
      lines.push(
        `status=0; timeout -s INT ${stopAfterS} bash ${file} > ${file}.out 2>&1 || status=$?`,
        `[ "$status" = 124 ] || [ "$status" = 130 ] || { cat ${file}.out >&2; exit 1; }`,
        `[ -s ${file}.out ] || { echo 'printed nothing' >&2; exit 1; }`,
      );
  });
  lines.push("echo '::done' >&2");
  return `${lines.join('\n')}\n`;
}
