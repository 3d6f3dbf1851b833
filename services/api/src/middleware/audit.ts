import type { Next } from 'koa';
import { coversLocation } from '@pos/shared/auth/scope';
import type { Counter } from 'prom-client';
import { ProblemError } from '@pos/shared/domain/problem';
import { AuditEntry, AuditRepo } from '@pos/shared/store/audit';
import { newId } from '@pos/shared/store/ids';
import { storeProblem } from '@pos/shared/store/store-errors';
import type { AppContext } from '../context';
import { isSafeMethod } from './problems';
import { operatorOfRequest } from './admin-auth';
import { toAuditRecord } from '@pos/shared/domain/views';

export interface AuditDeps {
  audit: Pick<AuditRepo, 'append'>;
  /** AUDIT_RETENTION. */
  retentionMs: number;
  writes: Counter<'outcome'>;
  /** Where the routes are mounted, before their own patterns (Bull Board's app, under BULL_BOARD_PATH). */
  mountPath?: string;
}

/** A route of one location (`/admin/v1/locations/:id/...`): its `id` is the location. */
const LOCATION_ROUTE = /\/locations\/:id(?:\/|$)/;

/** The status an error becomes once the problem renderer has it (middleware/problems.ts). */
function statusOf(err: unknown): number {
  if (err instanceof ProblemError) return err.problem.status;
  return storeProblem(err, '')?.status ?? 500;
}

/**
 * Path parameters as audit targets: ids and numbers only. The route's pattern
 * (`/admin/v1/locations/:id/orders/:number/recover`) names them; a parameter holds no secret
 * (keys and tokens travel in headers and bodies, which are never recorded).
 */
function targetsOf(ctx: AppContext): Record<string, string> {
  const params = (ctx as AppContext & { params?: Record<string, string> }).params ?? {};
  return Object.fromEntries(Object.entries(params).map(([name, value]) => [name, String(value).slice(0, 128)]));
}

/**
 * Records every operator write (any method but GET, HEAD and OPTIONS) once its outcome is known,
 * with what the handler says it changed (`ctx.state.auditChange`): appended to the log's hash
 * chain (a read and an insert), awaited before the answer goes out, so that an answered write
 * always has its record (a buffer would lose what a crash caught in it), and logged as an
 * `audit record` line, which ships the chain's hashes off the box with the logs. A failed append
 * is logged and counted, and the answer goes out anyway: the write itself is done and must not be
 * reported as failed. Runs after authentication (it needs the operator) and before the role
 * check, so that refused attempts are recorded too.
 */
export function auditWrites(deps: AuditDeps) {
  return async function audit(ctx: AppContext, next: Next): Promise<void> {
    if (isSafeMethod(ctx.method)) return next();
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } catch (err) {
      status = statusOf(err);
      throw err;
    } finally {
      await record(ctx, status, deps);
    }
  };
}

async function record(ctx: AppContext, status: number, deps: AuditDeps): Promise<void> {
  const operator = operatorOfRequest(ctx);
  const at = new Date();
  const targets = targetsOf(ctx);
  const matched = (ctx as AppContext & { _matchedRoute?: string })._matchedRoute;
  const route = matched === undefined ? ctx.path : `${deps.mountPath ?? ''}${matched}`;
  // the route's scope check (routes/admin-access.ts) names it once known; else a location's route
  // names it. An attempt on a location the operator does not cover is not that location's record:
  // its operators would read who tried (the chain-wide readers still do).
  const named = ctx.state.auditLocationId ?? (LOCATION_ROUTE.test(route) ? targets.id : undefined);
  const locationId = named !== undefined && coversLocation(operator, named) ? named : undefined;
  const entry: AuditEntry = {
    _id: newId(),
    at,
    operatorId: operator.id,
    operatorName: operator.name,
    role: operator.role,
    method: ctx.method,
    route,
    targets,
    locationId,
    status,
    requestId: ctx.state.requestId,
    ...(ctx.state.claimedRequestId !== undefined && { claimedRequestId: ctx.state.claimedRequestId }),
    change: ctx.state.auditChange,
    purgeAt: new Date(at.getTime() + deps.retentionMs),
  };
  try {
    const stored = await deps.audit.append(entry);
    deps.writes.inc({ outcome: 'written' });
    ctx.state.log.info({ audit: toAuditRecord(stored) }, 'audit record');
  } catch (err) {
    deps.writes.inc({ outcome: 'failed' });
    ctx.state.log.error({ err, audit: { ...entry, purgeAt: undefined } }, 'audit record not written');
  }
}
