/**
 * The lint rules that keep package boundaries (run on the tree by `npm run lint`), proved on
 * snippets placed in each package: they must fail what they exist to fail.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { importCycles, importGraph } from '../support/import-graph';

const ROOT = path.resolve(__dirname, '../..');
const ESLINT = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');

/** The rules ESLint (as `npm run lint` runs it) reports on `code` as if it were `file`. */
function ruleIds(file: string, code: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [ESLINT, '--format', 'json', '--stdin', '--stdin-filename', file],
      { cwd: ROOT },
      (err, stdout) => {
        // exit code 1 means "problems found"; anything else is a broken run
        if (err && err.code !== 1) return reject(err);
        const [result] = JSON.parse(stdout) as { messages: { ruleId: string | null; message: string }[] }[];
        resolve((result?.messages ?? []).map((m) => m.ruleId ?? m.message));
      },
    );
    child.stdin!.end(code);
  });
}

describe('package boundaries', () => {
  it('a package may not import a library its package.json does not list', async () => {
    expect(await ruleIds('services/worker/src/probe.ts', "import Koa from 'koa';\nexport const k = Koa;\n")).toEqual([
      'import-x/no-extraneous-dependencies',
    ]);
    expect(
      await ruleIds('shared/src/probe.ts', "import type Router from '@koa/router';\nexport type R = Router;\n"),
    ).toEqual(['import-x/no-extraneous-dependencies']);
  });

  it('nor another of our packages it does not depend on', async () => {
    expect(
      await ruleIds(
        'services/worker/src/probe.ts',
        "import { startApi } from '@pos/api/server';\nexport const s = startApi;\n",
      ),
    ).toEqual(['import-x/no-extraneous-dependencies']);
  });

  it('nor reach into another package by relative path', async () => {
    expect(
      await ruleIds(
        'services/api/src/probe.ts',
        "import { loadConfig } from '../../../shared/src/config';\nexport const l = loadConfig;\n",
      ),
    ).toEqual(['import-x/no-relative-packages']);
  });

  it('the board (browser code) takes only the pure modules of @pos/shared, and nothing of Node', async () => {
    const board = 'web/board/src/probe.tsx';
    expect(
      await ruleIds(
        board,
        "import { SseParser } from '@pos/shared/clients/sse-parser';\nimport { render } from 'preact';\nexport const x = [SseParser, render];\n",
      ),
    ).toEqual([]);
    expect(
      await ruleIds(
        board,
        "import { parseEventId } from '@pos/shared/events/stream-cursor';\nexport const x = parseEventId;\n",
      ),
    ).toEqual([]);
    expect(
      await ruleIds(board, "import { OrdersRepo } from '@pos/shared/store/orders';\nexport const x = OrdersRepo;\n"),
    ).toEqual(['no-restricted-imports']);
    expect(
      await ruleIds(
        board,
        "import { RegisterClient } from '@pos/shared/clients/register/client';\nexport const x = RegisterClient;\n",
      ),
    ).toEqual(['no-restricted-imports']);
    expect(await ruleIds(board, "import { readFile } from 'fs';\nexport const x = readFile;\n")).toEqual([
      'import-x/no-nodejs-modules',
    ]);
    expect(await ruleIds(board, "import Koa from 'koa';\nexport const k = Koa;\n")).toEqual([
      'import-x/no-extraneous-dependencies',
    ]);
    expect(await ruleIds(board, "console.log('hi');\n")).toEqual(['no-console']);
  });

  it('declared imports pass, and the service has no console output', async () => {
    expect(
      await ruleIds(
        'services/api/src/probe.ts',
        "import Koa from 'koa';\nimport { loadConfig } from '@pos/shared/config';\nexport const x = [Koa, loadConfig];\n",
      ),
    ).toEqual([]);
    expect(await ruleIds('services/worker/src/probe.ts', "console.log('hi');\n")).toEqual(['no-console']);
  });
});

describe('import cycles', () => {
  // ESLint's import-x/no-cycle (in `npm run lint`) skips `import type`; this walks every import.
  it('no module of a package, the scripts, the bench or the tests imports itself back, not even through types', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(200);
    expect(importCycles(graph)).toEqual([]);
  });

  it('a cycle through type-only imports and re-exports is found', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-cycle-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { module: 'node16', strict: true }, include: ['*.ts'] }),
      );
      fs.writeFileSync(
        path.join(dir, 'documents.ts'),
        "import type { Repo } from './repo';\nexport interface Doc { repo?: Repo }\n",
      );
      fs.writeFileSync(path.join(dir, 'repo.ts'), "export type { Doc } from './views';\nexport class Repo {}\n");
      fs.writeFileSync(path.join(dir, 'views.ts'), "import type { Doc } from './documents';\nexport type { Doc };\n");
      fs.writeFileSync(path.join(dir, 'main.ts'), "import { Repo } from './repo';\nexport const repo = new Repo();\n");
      expect(importCycles(importGraph(['.'], dir), dir)).toEqual([['documents.ts', 'repo.ts', 'views.ts']]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
