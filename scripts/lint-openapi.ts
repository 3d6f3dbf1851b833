/**
 * Lints the OpenAPI document with Redocly's `recommended-strict` rules (every finding an error),
 * including the check of each example against its schema. Part of `npm run lint`.
 *   npm run lint:openapi [-- --print]   (--print writes the document to stdout)
 */
import { readServiceInfo } from '@pos/api/service-info';
import { loadConfig } from '@pos/shared/config';
import { buildOpenApiDocument } from '@pos/shared/openapi/document';

/** Responses the document keeps for every route rather than for one operation (see its description). */
const GLOBAL_RESPONSES = ['#/components/responses/UnknownRoute', '#/components/responses/MethodNotAllowed'];

async function main(): Promise<number> {
  // an ES module; this script is CommonJS like the rest
  const { createConfig, formatProblems, lintFromString } = await import('@redocly/openapi-core');
  const config = loadConfig({});
  const { basePath, bodyLimitBytes } = config.http;
  const document = buildOpenApiDocument({
    basePath,
    version: readServiceInfo().version,
    bodyLimitBytes,
    menuBodyLimitBytes: config.menus.bodyLimitBytes,
  });
  const source = JSON.stringify(document, null, 2);
  if (process.argv.includes('--print')) {
    process.stdout.write(`${source}\n`);
    return 0;
  }
  const absoluteRef = 'openapi.json';
  const lintConfig = await createConfig(
    {
      extends: ['recommended-strict'],
      rules: {
        'operation-tag-defined': 'error',
        'path-params-defined': 'error',
        // The public pages and probes (/, /docs, /healthz, /metrics, the document) have no 4xx of their own.
        'operation-4xx-response': 'off',
      },
    },
    { ignore: { [absoluteRef]: { 'no-unused-components': new Set(GLOBAL_RESPONSES) } } },
  );
  const findings = (await lintFromString({ source, absoluteRef, config: lintConfig })).filter(
    (finding) => !finding.ignored,
  );
  if (findings.length > 0) {
    formatProblems(findings, {
      format: 'stylish',
      totals: { errors: findings.length, warnings: 0, ignored: 0 },
      version: '',
      maxProblems: 100,
    });
    return 1;
  }
  process.stdout.write(
    `openapi: ${Object.keys(document.paths as object).length} paths, Redocly recommended-strict: no findings\n`,
  );
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
