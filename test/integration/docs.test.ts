/**
 * The published contract: the OpenAPI document the service serves is the one built from the
 * code's schemas, and it lists exactly the routes the routers have; `/docs` and `/` are served
 * by this node, without a token and without anything secret.
 */
import type Router from '@koa/router';
import { createApps } from '@pos/api/app';
import { buildOpenApiDocument, DOCS_FILES } from '@pos/shared/openapi/document';
import fs from 'node:fs';
import path from 'node:path';
import { call } from '../support/http';
import { ROOT, useStack } from '../support/stack';

/** The release this checkout is (every package carries it). */
const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };

describe('the published contract', () => {
  const stack = useStack({ BODY_LIMIT: '4096' });

  it('serves the OpenAPI 3.1 document at {base_url}/openapi.json, built for its configuration', async () => {
    const res = await call('GET', `${stack.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const document = res.json();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: 'POS ordering service', version });
    const { config } = stack.api.deps;
    expect(document).toEqual(buildOpenApiDocument({ basePath: config.http.basePath, version, bodyLimitBytes: 4096 }));
  });

  it('lists exactly the routes the routers have, method for method', async () => {
    const apps = createApps(stack.api.deps);
    const routers = [apps.public, apps.operator]
      .flatMap((app) => app?.middleware ?? [])
      .map((m) => (m as { router?: Router }).router)
      .filter((r): r is Router => r !== undefined);
    const routes = new Set<string>();
    for (const router of routers) {
      for (const layer of router.stack) {
        for (const method of layer.methods) if (method !== 'HEAD') routes.add(`${method} ${layer.path}`);
      }
    }
    const document = buildOpenApiDocument({ basePath: stack.api.deps.config.http.basePath, version: 'x' }) as {
      paths: Record<string, object>;
    };
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(document.paths)) {
      // Bull Board is middleware of its own, not a router's route
      if (path === '/admin/queues') continue;
      for (const method of Object.keys(item))
        documented.add(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`);
    }
    expect([...routes].sort()).toEqual([...documented].sort());
    expect(routes.size).toBeGreaterThan(30);
  });

  it('/docs renders the document with Swagger UI from this node', async () => {
    const page = await call('GET', `${stack.origin}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('data-document="/api/v1/openapi.json"');
    const assets = [...page.text.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.sort()).toEqual(DOCS_FILES.map((file) => `/docs/${file}`).sort());
    expect(page.text).not.toMatch(/https?:\/\//);
    for (const asset of assets) {
      const res = await call('GET', `${stack.origin}${asset}`);
      expect(`${asset} ${res.status}`).toBe(`${asset} 200`);
    }
    const script = await call('GET', `${stack.origin}/docs/docs.js`);
    expect(script.text).toContain('validatorUrl: null');
    // the package's own files that the page does not name are not served (its index points to a remote document)
    for (const file of ['index.html', 'swagger-initializer.js', '..%2Fpackage.json']) {
      expect((await call('GET', `${stack.origin}/docs/${file}`)).status).toBe(404);
    }
  });

  it('/ names the service and its version, and links to what an operator looks for, with no secret', async () => {
    const res = await call('GET', `${stack.origin}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('<h1>POS ordering service</h1>');
    expect(res.text).toContain(`Version ${version}`);
    for (const href of ['/docs', '/api/v1/openapi.json', '/admin/queues', '/metrics', '/healthz', '/readyz'])
      expect(res.text).toContain(`href="${href}"`);
    expect(res.text).not.toContain(stack.env.ADMIN_TOKEN!);
  });
});
