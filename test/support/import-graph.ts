/**
 * The import graph of the repository's TypeScript, as the TypeScript compiler resolves it, with
 * every kind of import: `import type`, `export ... from`, `import()` and `require`. ESLint's
 * `import-x/no-cycle` skips type-only imports; a cycle through them still couples modules
 * that should not know each other, so the package-boundaries test looks for cycles here.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const ROOT = path.resolve(__dirname, '../..');

/** The projects whose files make the graph: each package, and the root's scripts, bench and tests. */
export const PROJECTS = ['shared', 'services/api', 'services/worker', 'web/board', '.'];

/** Each source file (absolute path) and the repository files it imports. */
export type ImportGraph = Map<string, string[]>;

function parsedProject(dir: string): ts.ParsedCommandLine {
  const file = path.join(dir, 'tsconfig.json');
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config, ts.sys, path.dirname(file), undefined, file);
}

/**
 * The files imported by `file` that belong to the repository (not node_modules), resolved as `options` resolve them.
 */
function importsOf(file: string, options: ts.CompilerOptions, host: ts.ModuleResolutionHost): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  const found = new Set<string>();
  for (const { fileName } of importedFiles) {
    const resolved = ts.resolveModuleName(fileName, file, options, host).resolvedModule;
    if (!resolved || resolved.isExternalLibraryImport) continue;
    const target = fs.realpathSync(resolved.resolvedFileName);
    if (!target.includes(`${path.sep}node_modules${path.sep}`) && !target.endsWith('.d.ts')) found.add(target);
  }
  return [...found];
}

/** The graph of every project's files (`projects`: directories of tsconfig.json files, relative to `root`). */
export function importGraph(projects: readonly string[] = PROJECTS, root = ROOT): ImportGraph {
  const graph: ImportGraph = new Map();
  const host: ts.ModuleResolutionHost = { ...ts.sys, realpath: fs.realpathSync };
  for (const project of projects) {
    const { options, fileNames } = parsedProject(path.resolve(root, project));
    for (const file of fileNames.map((name) => fs.realpathSync(name))) {
      if (!graph.has(file) && !file.endsWith('.d.ts')) graph.set(file, importsOf(file, options, host));
    }
  }
  return graph;
}

/**
 * The import cycles of a graph: each strongly connected component of more than one file (or a
 * file that imports itself), as paths relative to `root`, sorted. Tarjan's algorithm.
 */
export function importCycles(graph: ImportGraph, root = ROOT): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;

  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      component.push(member);
      if (member === file) break;
    }
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) {
      cycles.push(component.map((member) => path.relative(root, member)).sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}
