import { AppContext, queryOf } from '../context';
import type { ApiDeps } from '../deps';
import { ClientStream, StreamReader } from '../stream/client-stream';
import { parseCursor } from '../stream/cursor';
import type { Replay } from '../stream/replay';

/**
 * Serves one event stream of a location, for a register or an operator (the admin API's stream).
 * Authentication (by the routes), the cursor and the replay come first, so that their failures
 * are ordinary 401s and problems; then the response is written directly (ctx.respond = false)
 * until the stream ends; the handler returns at once, and the access line reporting the whole
 * stream waits for its end.
 */
export async function serveStream(ctx: AppContext, deps: ApiDeps, reader: StreamReader): Promise<void> {
  const cursor = parseCursor(queryOf(ctx), ctx.get('last-event-id'));
  if (ctx.method === 'HEAD') {
    // no body follows a HEAD: holding a stream open for it would only cost
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    return;
  }
  const stream = new ClientStream({
    reader,
    cursor,
    res: ctx.res,
    openings: deps.hub.openings,
    sessions: deps.repos.sessions,
    streams: deps.config.streams,
    clock: deps.hub.clock,
    metrics: deps.metrics,
    log: ctx.state.log,
    requestId: ctx.state.requestId,
    onEnd: deps.hub.remove,
    onResyncNeeded: deps.hub.requestResync,
  });
  let replay: Replay;
  try {
    // by the request's deadline: a Redis that does not confirm the subscription costs no more
    await deps.hub.add(stream, ctx.state.deadline - Date.now());
    replay = await stream.prepare();
  } catch (err) {
    stream.end('failed');
    throw err;
  }
  if (ctx.headerSent) {
    // Answered 503 meanwhile (the request's deadline; see request-deadline): no stream follows.
    stream.end('failed');
    return;
  }
  ctx.status = 200;
  ctx.respond = false;
  stream.attach(replay);
  // The stream goes on after this returns (nothing of the request's middleware waits with it);
  // its access line and metrics are recorded when it ends.
  ctx.state.ending = stream.done;
}
