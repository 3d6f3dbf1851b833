/**
 * A queued write's admission to the transition queue, decided once per request, where the route
 * names what its job will be routed by (the operation table's `partitionBy`, through routingKey):
 * before its body is read, its key claimed or anything asked of Redis or MongoDB, so that a
 * refusal costs nothing more. The job client holds the admission from here (JobClient.admit) until
 * its job settles or, when no job took it, until the request ends (JobClient.release).
 */
import type { Next } from 'koa';
import type { OperationSpec } from '@pos/shared/openapi/operations';
import { routingKey } from '@pos/shared/queue/transition-queue';
import { isId } from '@pos/shared/store/query-values';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { queueRefusal } from './refusal';

/** The middleware of a queued operation: an admission to its partition, or a 503 at once. */
export function admitQueued(deps: Pick<ApiDeps, 'jobs'>, spec: OperationSpec) {
  return async function admitJob(ctx: AppContext, next: Next): Promise<void> {
    const { session } = ctx.state;
    const key = routingKey(spec.partitionBy ?? 'location', {
      sessionId: ctx.params.sessionId ?? session?._id,
      locationId: session?.locationId ?? (isId(ctx.params.id) ? ctx.params.id : undefined),
    });
    // a path that names nothing (a malformed id): the handler refuses it before any job
    if (key === undefined) return next();
    const admission = deps.jobs.admit(key, spec.criticality);
    if ('refusedForSeconds' in admission) {
      const refusal = queueRefusal(ctx.path, admission.refusedForSeconds);
      ctx.state.shed = 'queue';
      ctx.status = refusal.status;
      ctx.set(refusal.headers);
      ctx.body = refusal.body;
      return;
    }
    ctx.state.admitted = admission;
    try {
      await next();
    } finally {
      deps.jobs.release(admission);
    }
  };
}
