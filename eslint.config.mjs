// Lint: package boundaries (every import declared by its package, no reaching into another
// package by relative path) and no console output from the service itself.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const PACKAGES = ['shared/src', 'services/api/src', 'services/worker/src'];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'bench/results/**', 'coverage/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, parserOptions: { ecmaVersion: 2022, sourceType: 'module' } },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
    },
    rules: {
      // Relative paths stay inside their package; other packages are imported by name.
      'import-x/no-relative-packages': 'error',
      // Test, bench and script code may use the root's dev tooling.
      'import-x/no-extraneous-dependencies': ['error', { devDependencies: true, includeTypes: true }],
    },
  },
  {
    // The packages: only what their own package.json lists under dependencies.
    files: PACKAGES.map((dir) => `${dir}/**/*.ts`),
    rules: {
      'import-x/no-extraneous-dependencies': ['error', { devDependencies: false, optionalDependencies: false, includeTypes: true }],
      // The service logs through pino, with a request id on every line.
      'no-console': 'error',
    },
  },
);
