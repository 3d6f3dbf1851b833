import type Router from '@koa/router';
import path from 'node:path';
import { send } from '@koa/send';
import { buildOpenApiDocument, DOCS_FILES } from '@pos/shared/openapi/document';
import type { AppContext, AppState } from '../context';
import { createRouter } from './router';
import type { ApiDeps } from '../deps';
import type { ServiceInfo } from '../service-info';
import { DOCS_SCRIPT, docsPage } from '../docs/pages';

/** Swagger UI's files come from the npm package, served from this node: no CDN. */
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSET_MAX_AGE_MS = 24 * 3_600_000;

/**
 * The published contract: the OpenAPI document at `{base_url}/openapi.json`, built once from the
 * schemas the code validates and serialises with, and `/docs`, a page that renders it.
 */
export function docsRoutes(deps: Pick<ApiDeps, 'config'>, info: ServiceInfo): Router<AppState> {
  const router = createRouter();
  const { basePath, bodyLimitBytes } = deps.config.http;
  const documentUrl = `${basePath}/openapi.json`;
  const document = JSON.stringify(buildOpenApiDocument({ basePath, version: info.version, bodyLimitBytes }));
  const page = docsPage(info, documentUrl);

  router.get(documentUrl, (ctx: AppContext) => {
    ctx.type = 'application/json';
    ctx.body = document;
  });

  router.get('/docs', (ctx: AppContext) => {
    ctx.type = 'text/html';
    ctx.body = page;
  });

  router.get('/docs/:file', async (ctx: AppContext, next) => {
    const file = String(ctx.params.file);
    if (file === DOCS_SCRIPT.name) {
      ctx.type = 'text/javascript';
      ctx.body = DOCS_SCRIPT.source;
      return;
    }
    // only the files the page names: never the package's own index page, which points elsewhere
    if (!(DOCS_FILES as readonly string[]).includes(file)) return next();
    await send(ctx, file, { root: SWAGGER_UI_DIR, maxage: ASSET_MAX_AGE_MS });
  });

  return router;
}
