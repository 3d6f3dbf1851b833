import Router from '@koa/router';
import { findOrder } from '@pos/shared/store/archive';
import type { OrderScope } from '@pos/shared/store/orders';
import { AppContext, AppState, sessionOf } from '../context';
import type { ApiDeps } from '../deps';
import { requireSession } from '../middleware/api-key-auth';
import { ClientStream } from '../stream/client-stream';
import { parseCursor } from '../stream/cursor';
import type { Replay } from '../stream/replay';

/**
 * The register's event stream (part 6; decisions.md "Event stream"). Authentication, the
 * cursor and the replay come first, so that their failures are ordinary 401s and problems;
 * then the response is written directly (ctx.respond = false) until the stream ends, so that
 * the access line reports the whole stream.
 */
export function streamRoutes(deps: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: deps.config.basePath });
  // A resync re-reads orders it announced as PLACED whatever their state: one that finished and
  // was archived meanwhile is read from the archive.
  const ordersAnywhere = {
    listPlaced: (locationId: string, after?: number) => deps.orders.listPlaced(locationId, after),
    find: async (scope: OrderScope, number: number) => (await findOrder(deps, scope, number))?.order ?? null,
  };

  router.get('/notifications/service/stream', requireSession(deps.sessions, 'SERVICE'), async (ctx: AppContext) => {
    const cursor = parseCursor(ctx.query, ctx.get('last-event-id'));
    if (ctx.method === 'HEAD') {
      // no body follows a HEAD: holding a stream open for it would only cost
      ctx.status = 200;
      ctx.type = 'text/event-stream';
      return;
    }
    const stream = new ClientStream({
      session: sessionOf(ctx),
      cursor,
      res: ctx.res,
      repos: { orders: ordersAnywhere, commands: deps.commands, sessions: deps.sessions },
      config: deps.config,
      metrics: deps.metrics,
      log: ctx.state.log,
      onEnd: (ended) => deps.hub.remove(ended),
    });
    let replay: Replay;
    try {
      await deps.hub.add(stream);
      replay = await stream.prepare();
    } catch (err) {
      stream.end('failed');
      throw err;
    }
    ctx.status = 200;
    ctx.respond = false;
    stream.attach(replay);
    await stream.done;
  });

  return router;
}
