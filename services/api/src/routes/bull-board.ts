import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Middleware, Next } from 'koa';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { requireAdmin } from '../middleware/admin-auth';

export const BULL_BOARD_PATH = '/admin/queues';

/**
 * Bull Board (the work queue's dashboard) at /admin/queues, behind the admin token.
 * Its Koa adapter mounts a Koa app of its own (views, static assets, JSON API) with koa-mount,
 * so everything under the path, page and assets alike, passes the admin check first.
 */
export function bullBoard(deps: Pick<ApiDeps, 'queue' | 'lifecycleQueue' | 'adminToken'>): Middleware<AppState> {
  const serverAdapter = new KoaAdapter().setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    // The lifecycle queue is shown read-only: its runs come from the schedule, not from retries.
    queues: [new BullMQAdapter(deps.queue), new BullMQAdapter(deps.lifecycleQueue, { readOnlyMode: true })],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'POS order work' } },
  });
  const board = serverAdapter.registerPlugin() as unknown as Middleware<AppState>;
  const admin = requireAdmin(deps.adminToken, { browser: true });

  return async function bullBoardMiddleware(ctx: AppContext, next: Next): Promise<void> {
    if (ctx.path !== BULL_BOARD_PATH && !ctx.path.startsWith(`${BULL_BOARD_PATH}/`)) return next();
    // Unknown sub-paths fall through the board to `next`, and so end as the usual 404 problem.
    await admin(ctx, () => board(ctx, next));
  };
}
