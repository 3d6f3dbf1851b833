import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { errorHandler } from '@bull-board/api/dist/handlers/error.js';
import { KoaAdapter } from '@bull-board/koa';
import type { Middleware, Next } from 'koa';
import { ProblemError, problemOf } from '@pos/shared/domain/problem';
import { PAGE_CSP } from '../middleware/content-security';
import { storeProblem } from '@pos/shared/store/store-errors';
import type { AppContext, AppState } from '../context';
import type { ApiDeps } from '../deps';
import { allowRole, authenticateOperator } from '../middleware/admin-auth';
import { auditWrites } from '../middleware/audit';
import { adminOperation, allowBound } from './admin-access';

/** Where Bull Board is mounted: its entry of the operation table. */
export const BULL_BOARD_PATH = adminOperation('bullBoard').path;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The board's API calls a writable board still allows (under BULL_BOARD_PATH): retrying,
 * cleaning (removing) and promoting jobs, pausing and resuming queues. Adding jobs, editing
 * their data, emptying or obliterating a queue stay refused: they bypass the API's checks.
 */
const WRITABLE_ACTIONS =
  /^\/api\/queues\/(?:[^/]+\/){0,2}(?:retry|clean|promote|pause|resume)(?:\/(?:completed|failed|delayed|wait|waiting|active|paused|prioritized|waiting-children))?$/;

/** The host an Origin header names; undefined for `null` or anything unparsable. */
function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/**
 * A write to a writable board must come from the board's own page: a browser resends HTTP Basic
 * credentials by itself, so a form or script on another site could otherwise act with them.
 * Refused: cross-site requests (Sec-Fetch-Site, else Origin against Host), bodies that are
 * not JSON (what an HTML form can send), and actions outside WRITABLE_ACTIONS.
 */
function checkWrite(ctx: AppContext): void {
  const site = ctx.get('sec-fetch-site');
  const origin = ctx.get('origin');
  if ((site && site !== 'same-origin' && site !== 'none') || (origin && originHost(origin) !== ctx.host)) {
    throw new ProblemError(problemOf('forbidden', 'Cross-site requests to Bull Board are refused'));
  }
  if (ctx.request.type && ctx.request.type !== 'application/json') {
    throw new ProblemError(problemOf('unsupportedMediaType', 'Bull Board accepts JSON bodies only'));
  }
  if (!WRITABLE_ACTIONS.test(ctx.path.slice(BULL_BOARD_PATH.length))) {
    throw new ProblemError(problemOf('forbidden', 'Bull Board allows retrying, cleaning, promoting and pausing only'));
  }
}

/**
 * Bull Board's page links its web font from a font host: dropped (the page falls back to the system's sans-serif).
 */
const FONT_HOST_LINK = /<link[^>]*href="https:\/\/fonts\.googleapis\.com\/[^"]*"[^>]*>/g;

/** Bull Board's page under the pages' policy, fetching nothing from another origin. */
function ownOriginOnly(ctx: AppContext): void {
  if (typeof ctx.body === 'string') ctx.body = ctx.body.replace(FONT_HOST_LINK, '');
  ctx.set('Content-Security-Policy', PAGE_CSP.bullBoard);
}

type BoardDeps = Pick<
  ApiDeps,
  | 'queues'
  | 'lifecycleQueue'
  | 'orderDeadlines'
  | 'snoozeEnds'
  | 'webhookQueue'
  | 'adminToken'
  | 'operatorLookup'
  | 'repos'
  | 'metrics'
  | 'config'
>;

/** Bull Board's own Koa app over every queue of the deployment. */
function boardApp(deps: BoardDeps, writable: boolean): Middleware<AppState> {
  const serverAdapter = new KoaAdapter().setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: [
      ...deps.queues.all.map(
        ({ partition, queue }) =>
          new BullMQAdapter(queue, { readOnlyMode: !writable, prefix: partition.label && `${partition.label}:` }),
      ),
      // The lifecycle queue is shown read-only: its runs come from the schedule, not from retries.
      new BullMQAdapter(deps.lifecycleQueue, { readOnlyMode: true }),
      // the order deadlines' delayed jobs (docs/presence-and-deadlines.md), to look at
      new BullMQAdapter(deps.orderDeadlines, { readOnlyMode: true }),
      // the snoozes' ends (docs/menu.md), to look at
      new BullMQAdapter(deps.snoozeEnds, { readOnlyMode: true }),
      // Webhook deliveries: a failed one may be retried from the board, like a work job.
      new BullMQAdapter(deps.webhookQueue, { readOnlyMode: !writable }),
    ],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'POS order work' } },
  });
  // Bull Board's own handler answers every error 500. A Redis down or not answering goes on to
  // the problem renderer instead (thrown out of the board's app): a 503 with Retry-After.
  serverAdapter.setErrorHandler((err) => {
    if (storeProblem(err, '')?.status === 503) throw err;
    return errorHandler(err);
  });
  return serverAdapter.registerPlugin() as unknown as Middleware<AppState>;
}

/**
 * Bull Board (the transition queue's dashboard) at /admin/queues, for admins not bound
 * to locations (ADMIN_TOKEN or such an operator's token): every
 * partition, `p1of3:order-work` and so on (the single queue of one Redis is plain `order-work`).
 * Its Koa adapter mounts a Koa app of its own (views, static assets, JSON API) with koa-mount,
 * so everything under the path, page and assets alike, passes the admin check first.
 * Read-only unless BULL_BOARD_WRITABLE: then only GET, HEAD and OPTIONS pass (405 otherwise),
 * and the board hides its buttons.
 */
export function bullBoard(deps: BoardDeps): Middleware<AppState> {
  const writable = deps.config.auth.bullBoardWritable;
  const board = boardApp(deps, writable);
  const authenticate = authenticateOperator(deps, { browser: true });
  const spec = adminOperation('bullBoard');
  const adminOnly = allowRole(spec.role);
  const unbound = allowBound(spec.bound);
  const audit = auditWrites({
    audit: deps.repos.audit,
    retentionMs: deps.config.audit.retentionMs,
    writes: deps.metrics.auditWrites,
    mountPath: BULL_BOARD_PATH,
  });

  return async function bullBoardMiddleware(ctx: AppContext, next: Next): Promise<void> {
    if (ctx.path !== BULL_BOARD_PATH && !ctx.path.startsWith(`${BULL_BOARD_PATH}/`)) return next();
    // An unbound admin's (the whole deployment's queues: every location's
    // jobs), every write audited, refusals included.
    await authenticate(ctx, () =>
      audit(ctx, () =>
        adminOnly(ctx, () =>
          unbound(ctx, async () => {
            if (!SAFE_METHODS.has(ctx.method)) {
              if (!writable) {
                throw new ProblemError(
                  problemOf('methodNotAllowed', 'Bull Board is read-only (BULL_BOARD_WRITABLE is off)'),
                  { Allow: 'GET, HEAD, OPTIONS' },
                );
              }
              checkWrite(ctx);
            }
            // Unknown sub-paths fall through the board to `next`, and so end as the usual 404 problem.
            await board(ctx, next);
            if (ctx.response.is('html')) ownOriginOnly(ctx);
          }),
        ),
      ),
    );
  };
}
