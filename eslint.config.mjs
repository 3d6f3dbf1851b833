// Lint: package boundaries (every import declared by its package, no reaching into another
// package by relative path, no import cycles) and no console output from the service itself.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const PACKAGES = ['shared/src', 'services/api/src', 'services/worker/src', 'web/board/src'];
const SOURCES = (dir) => [`${dir}/**/*.ts`, `${dir}/**/*.tsx`];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'bench/results/**', 'coverage/**'] },
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.mts'],
    languageOptions: { parser: tseslint.parser, parserOptions: { ecmaVersion: 2022, sourceType: 'module' } },
    plugins: { 'import-x': importX },
    settings: {
      // The files import-x reads to follow imports (no-cycle walks them); its default is JavaScript only.
      'import-x/extensions': ['.ts', '.tsx', '.mts', '.js', '.mjs', '.cjs'],
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.json'] })],
    },
    rules: {
      // Relative paths stay inside their package; other packages are imported by name.
      'import-x/no-relative-packages': 'error',
      // Test, bench, script and build-config code may use the root's or its package's dev tooling.
      'import-x/no-extraneous-dependencies': ['error', { devDependencies: true, includeTypes: true }],
      // Modules that import each other are one module in two files. This rule skips type-only
      // imports; test/unit/package-boundaries.test.ts looks for cycles through those too.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // The packages: only what their own package.json lists under dependencies.
    files: PACKAGES.flatMap(SOURCES),
    rules: {
      'import-x/no-extraneous-dependencies': [
        'error',
        { devDependencies: false, optionalDependencies: false, includeTypes: true },
      ],
      // The service logs through pino, with a request id on every line; the board shows its errors on the page.
      'no-console': 'error',
    },
  },
  {
    // The board runs in a browser: of @pos/shared only the pure modules (records, states, the
    // SSE parser, the stream cursor, the backoff), and nothing of Node. `tsc -p web/board` (DOM types, no Node types) checks
    // what those modules import in turn.
    files: SOURCES('web/board/src'),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^@pos/shared/(?!domain/(records|order-state|commands)$|clients/sse-parser$|events/stream-cursor$|util/doubling-pause$)',
              message:
                'The board may import only the pure modules of @pos/shared (domain records and states, the SSE parser, the stream cursor, the backoff).',
            },
            { regex: '^@pos/(api|worker)(/|$)', message: 'The board runs in a browser: no service code.' },
          ],
        },
      ],
      'import-x/no-nodejs-modules': 'error',
    },
  },
);
