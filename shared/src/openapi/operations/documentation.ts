/** The landing page, this document and its pages. One entry per operation, by its id (spec.ts). */
import { problems } from '../../domain/problem';
import { defineOperations, DOCS_FILES, html, json } from './spec';

export const DOCUMENTATION_OPERATIONS = defineOperations({
  landingPage: {
    method: 'get',
    path: '/',
    tag: 'Documentation',
    summary: "The service's name, version and links",
    access: 'public',
    criticality: 'exempt',
    ok: { status: 200, description: 'The page', content: html },
  },
  getOpenApiDocument: {
    method: 'get',
    path: '{base}/openapi.json',
    tag: 'Documentation',
    summary: 'This document',
    access: 'public',
    criticality: 'exempt',
    ok: {
      status: 200,
      description: 'OpenAPI 3.1',
      content: json({
        type: 'object',
        required: ['openapi', 'info', 'paths'],
        properties: {
          openapi: { type: 'string', const: '3.1.0' },
          info: { type: 'object' },
          paths: { type: 'object' },
        },
      }),
    },
  },
  docsPage: {
    method: 'get',
    path: '/docs',
    tag: 'Documentation',
    summary: 'This document, rendered (Swagger UI, served from this node)',
    access: 'public',
    criticality: 'exempt',
    ok: { status: 200, description: 'The page', content: html },
  },
  docsFile: {
    method: 'get',
    path: '/docs/{file}',
    tag: 'Documentation',
    summary: 'The files of the docs page',
    access: 'public',
    criticality: 'exempt',
    params: [
      {
        name: 'file',
        in: 'path',
        description: 'A file the page names',
        schema: { type: 'string', enum: [...DOCS_FILES] },
        example: 'swagger-ui.css',
      },
    ],
    ok: {
      status: 200,
      description: 'The file',
      content: {
        'text/css': { schema: { type: 'string' } },
        'text/javascript': { schema: { type: 'string' } },
        'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
      },
    },
    problems: [problems.notFound('No route for GET /docs/index.html')],
  },
});
