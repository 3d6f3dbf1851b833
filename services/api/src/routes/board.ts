import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { send } from '@koa/send';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { BOARD_OPERATIONS } from '@pos/shared/openapi/operations';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { escapeHtml } from '../docs/pages';
import type { Handlers } from './mount';
import { PAGE_CSP } from '../middleware/content-security';

/**
 * Where `npm run build` (Vite, in web/board) puts the board: the repository's web/board/dist,
 * reached from this file's folder, which is as deep in src/ (tsx) as in dist/ (the image).
 */
export const BOARD_DIST = path.resolve(__dirname, '../../../../web/board/dist');

/**
 * The page runs under this policy: its script and style come from its own files, it talks only to
 * this origin, and nothing may frame it or post a form from it.
 */
export const BOARD_CSP = PAGE_CSP.board;

/** Vite's hashed output names (`index-B1x2y3.js`); anything else under assets/ is a 404. */
const ASSET_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.(js|css|svg|png|woff2)$/;
const YEAR_MS = 365 * 24 * 3600 * 1000;

const NOT_BUILT = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Board not built</title></head>
<body>
<h1>The board is not built</h1>
<p>Its files are missing from <code>web/board/dist</code> on this node. Build them with
<code>npm run build</code> (or <code>bash scripts/setup.sh</code>, which does it), then reload.</p>
</body>
</html>
`;

/**
 * The live location board (web/board), as static files: the page at /board, its hashed assets
 * under /board/assets. It needs no token to load: it signs in with a key or the admin token
 * that it sends in headers. The page learns the register interface's base path from a meta tag
 * filled in here.
 */
export function boardHandlers(deps: Pick<ApiDeps, 'config'>, dist = BOARD_DIST): Handlers<typeof BOARD_OPERATIONS> {
  return {
    // (the router is not strict: `/board/` is served too)
    boardPage: async (ctx: AppContext) => {
      ctx.set({ 'Content-Security-Policy': BOARD_CSP, 'Referrer-Policy': 'no-referrer' });
      // read each time (a few hundred bytes): a rebuild's new asset names show without a restart
      let page: string;
      try {
        page = await readFile(path.join(dist, 'index.html'), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        ctx.state.log.warn({ dist }, 'board requested but not built');
        ctx.status = 503;
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = NOT_BUILT;
        return;
      }
      ctx.set('Cache-Control', 'no-cache');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = page.replace(
        /(<meta name="pos-base-path" content=")[^"]*(")/,
        `$1${escapeHtml(deps.config.http.basePath)}$2`,
      );
    },

    boardAsset: async (ctx: AppContext) => {
      const file = String(ctx.params.file);
      if (!ASSET_NAME.test(file)) throw new ProblemError(problems.notFound(`No route for ${ctx.method} ${ctx.path}`));
      try {
        // names carry their content's hash: cached for good
        await send(ctx, file, {
          root: path.join(dist, 'assets'),
          immutable: true,
          maxage: YEAR_MS,
          index: false,
          hidden: false,
        });
      } catch (err) {
        if ((err as { status?: number }).status === 404)
          throw new ProblemError(problems.notFound(`No route for ${ctx.method} ${ctx.path}`));
        throw err;
      }
    },
  };
}
