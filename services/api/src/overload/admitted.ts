/**
 * A queued write's admission to the transition queue, decided once per request, where the route
 * names what its job will be routed by (the operation table's `partitionBy`): before its body is
 * read, its key claimed or anything asked of Redis or MongoDB, so that a refusal costs nothing
 * more. The ticket rides on the request to the job client, which queues the job on it (or gives
 * it back) and checks that the job routes where it was admitted: one decision, never two.
 */
import type { Next } from 'koa';
import type { OperationSpec } from '@pos/shared/openapi/operations';
import { isId } from '@pos/shared/store/query-values';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import type { Admitted } from './queue-admission';
import { shed } from './shed';


/**
 * The routing key of the job an operation's request will queue, from what the route already
 * holds: a session close's is the session (the caller's, or the path's `:sessionId`), any other
 * the location (its session's, or the path's `:id`). routingKey(payload) in
 * shared/src/queue/transition-queue.ts is the same rule read from the job; the job client checks
 * that they agree.
 */
function routingKeyOf(spec: OperationSpec, ctx: AppContext): string | undefined {
  if (spec.partitionBy === 'session') return ctx.params.sessionId ?? ctx.state.session?._id;
  return ctx.state.session?.locationId ?? (isId(ctx.params.id) ? ctx.params.id : undefined);
}

/** The middleware of a queued operation: a ticket for its partition, or a 503 at once; given back if no job took it. */
export function admitQueued(deps: Pick<ApiDeps, 'queues' | 'admission'>, spec: OperationSpec) {
  return async function admitJob(ctx: AppContext, next: Next): Promise<void> {
    const key = routingKeyOf(spec, ctx);
    // a path that names nothing (a malformed id): the handler refuses it before any job
    if (key === undefined) return next();
    const partition = deps.queues.partitionOfKey(key);
    const ticket = deps.admission.acquire(partition, spec.criticality);
    if (!ticket) shed(ctx.state, 'queue', deps.admission.retryAfterSeconds(partition));
    const admitted: Admitted = { key, ticket, taken: false };
    ctx.state.admitted = admitted;
    try {
      await next();
    } finally {
      // refused by its checks, replayed, or following an earlier attempt's job: nothing was queued on it
      if (!admitted.taken) deps.admission.settled(ticket, false);
    }
  };
}
