/** The location board's page and files (docs/board.md). One entry per operation, by its id (spec.ts). */
import { problems } from '../../domain/problem';
import { defineOperations, html } from './spec';

export const BOARD_OPERATIONS = defineOperations({
  boardPage: {
    method: 'get',
    path: '/board',
    tag: 'Documentation',
    summary: 'The live location board (a page for kitchens and operators)',
    description:
      'Needs no token to load: it signs in with a register key or the admin ' +
      'token, which it sends in headers. 503 with a page saying how ' +
      'to build it when its files are missing.',
    access: 'public',
    criticality: 'exempt',
    ok: { status: 200, description: 'The page', content: html },
    problems: [problems.unavailable('The board is not built')],
  },
  boardAsset: {
    method: 'get',
    path: '/board/assets/{file}',
    tag: 'Documentation',
    summary: "The board's script, style sheet and icon (hashed names, cached for good)",
    access: 'public',
    criticality: 'exempt',
    params: [
      {
        name: 'file',
        in: 'path',
        description: 'A file the page names',
        schema: { type: 'string' },
        example: 'index-B1x2y3.js',
      },
    ],
    ok: {
      status: 200,
      description: 'The file',
      content: {
        'text/javascript': { schema: { type: 'string' } },
        'text/css': { schema: { type: 'string' } },
        'image/svg+xml': { schema: { type: 'string' } },
      },
    },
    problems: [problems.notFound('No route for GET /board/assets/missing.js')],
  },
});
