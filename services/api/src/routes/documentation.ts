import path from 'node:path';
import { send } from '@koa/send';
import { buildOpenApiDocument, DOCS_FILES } from '@pos/shared/openapi/document';
import { type DOCUMENTATION_OPERATIONS, operation } from '@pos/shared/openapi/operations';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { DOCS_SCRIPT, docsPage, landingPage } from '../docs/pages';
import { PAGE_CSP } from '../middleware/content-security';
import type { ServiceInfo } from '../service-info';
import type { Handlers } from './mount';
import { routePath } from './mount';

/** Swagger UI's files come from the npm package, served from this node: no CDN. */
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSET_MAX_AGE_MS = 24 * 3_600_000;

/** Where the landing page points: the operator surfaces only on the listener that serves them. */
function landingLinks(at: (id: Parameters<typeof operation>[0]) => string, operator: boolean) {
  return [
    { href: at('docsPage'), text: 'API documentation', note: 'the OpenAPI document, rendered' },
    { href: at('getOpenApiDocument'), text: 'OpenAPI document', note: 'OpenAPI 3.1, JSON' },
    {
      href: at('boardPage'),
      text: 'Location board',
      note: operator
        ? 'a location live; operators sign in with their token'
        : "a location live, with a register's key (operators: on the operator port, ADMIN_PORT)",
    },
    ...(operator
      ? [
          {
            href: at('bullBoard'),
            text: 'Bull Board',
            note: 'the transition queue; asks for the admin token as the password',
          },
          { href: at('metrics'), text: 'Metrics', note: 'Prometheus text' },
        ]
      : []),
    { href: at('liveness'), text: 'Liveness', note: 'the process answers' },
    { href: at('readiness'), text: 'Readiness', note: 'MongoDB and Redis answer' },
  ];
}

/**
 * The published contract: the OpenAPI document at `{base_url}/openapi.json`, built once from the
 * schemas the code validates and serialises with, `/docs`, a page that renders it, and `/`, the
 * service's name and version and where to go from there (public: it shows nothing secret): the
 * operator surfaces only on the listener that serves them (`operator`).
 */
export function documentationHandlers(
  deps: Pick<ApiDeps, 'config'>,
  info: ServiceInfo,
  { operator }: { operator: boolean },
): Handlers<typeof DOCUMENTATION_OPERATIONS> {
  const { basePath, bodyLimitBytes } = deps.config.http;
  const menuBodyLimitBytes = deps.config.menus.bodyLimitBytes;
  const at = (id: Parameters<typeof operation>[0]) => routePath(operation(id).path, basePath);
  const document = JSON.stringify(
    buildOpenApiDocument({ basePath, version: info.version, bodyLimitBytes, menuBodyLimitBytes }),
  );
  const page = docsPage(info, at('getOpenApiDocument'));
  const landing = landingPage(info, landingLinks(at, operator));

  return {
    landingPage: (ctx: AppContext) => {
      ctx.type = 'text/html';
      ctx.body = landing;
    },

    getOpenApiDocument: (ctx: AppContext) => {
      ctx.type = 'application/json';
      ctx.body = document;
    },

    docsPage: (ctx: AppContext) => {
      ctx.set('Content-Security-Policy', PAGE_CSP.docs);
      ctx.type = 'text/html';
      ctx.body = page;
    },

    docsFile: async (ctx: AppContext, next) => {
      const file = String(ctx.params.file);
      if (file === DOCS_SCRIPT.name) {
        ctx.type = 'text/javascript';
        ctx.body = DOCS_SCRIPT.source;
        return;
      }
      // only the files the page names: never the package's own index page, which points elsewhere
      if (!(DOCS_FILES as readonly string[]).includes(file)) return next();
      await send(ctx, file, { root: SWAGGER_UI_DIR, maxage: ASSET_MAX_AGE_MS });
    },
  };
}
