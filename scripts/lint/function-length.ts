/**
 * `npm run lint:functions` (part of `npm run lint`): no function of services/ or shared/ is longer
 * than MAX_LINES lines, its signature to its closing brace, the functions it defines inside
 * included. A long function is split into named steps (a shutdown as a list of stoppers, metrics
 * declared as data, a family of handlers as functions of their own), each readable on one screen.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const MAX_LINES = 60;
const ROOT = path.resolve(__dirname, '../..');
const DIRS = ['services', 'shared'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

const hasBody = (node: ts.Node): node is ts.SignatureDeclaration & { body: ts.Node } =>
  ts.isFunctionLike(node) && 'body' in node && node.body !== undefined;

/** Each function of the file over `max` lines: where it starts, its name, its length. */
export function longFunctions(
  file: string,
  text: string,
  max = MAX_LINES,
): { line: number; name: string; lines: number }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line;
  const found: { line: number; name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (hasBody(node)) {
      const start = lineOf(node.getStart(source));
      const lines = lineOf(node.getEnd()) - start + 1;
      if (lines > max) found.push({ line: start + 1, name: nameOf(node), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

if (require.main === module) {
  const long = DIRS.flatMap((dir) => sourceFiles(path.join(ROOT, dir))).flatMap((file) =>
    longFunctions(file, fs.readFileSync(file, 'utf8')).map(
      (f) => `${path.relative(ROOT, file)}:${f.line}: ${f.name} is ${f.lines} lines (at most ${MAX_LINES})`,
    ),
  );
  for (const line of long) process.stderr.write(`${line}\n`);
  if (long.length > 0) process.exit(1);
  process.stdout.write(`functions: none over ${MAX_LINES} lines in ${DIRS.join(', ')}\n`);
}
