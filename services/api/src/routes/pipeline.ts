import type { Middleware } from 'koa';
import type { OperationSpec } from '@pos/shared/openapi/operations';
import { type AppState, sessionOf } from '../context';
import type { ApiDeps } from '../deps';
import { allowRole, authenticateOperator, operatorOfRequest } from '../middleware/admin-auth';
import { requireSession } from '../middleware/api-key-auth';
import { auditWrites } from '../middleware/audit';
import { idempotency, unkeyed } from '../middleware/idempotency';
import { jsonBody } from '../middleware/json-body';
import { admitQueued } from '../overload/admitted';
import { allowBound } from './admin-access';

/** The middleware of one operation, before its handler. */
export type Stack = Middleware<AppState>[];

/** A write's JSON body (its limit, its answer to other types) and where its `Idempotency-Key` answers are kept. */
function writeParts(deps: ApiDeps) {
  const { config } = deps;
  // the register interface answers a body that is not JSON with its 400s; the others with a 415.
  // A menu upload has a limit of its own (MENU_BODY_LIMIT): a chain's menu is megabytes.
  const json = {
    register: jsonBody(config.http.bodyLimitBytes, { refuseOtherTypes: false }),
    other: jsonBody(config.http.bodyLimitBytes, { refuseOtherTypes: true }),
    menu: jsonBody(config.menus.bodyLimitBytes, { refuseOtherTypes: true }),
  };
  const bodyOf = (spec: OperationSpec): Middleware<AppState> =>
    spec.upload ? json.menu : spec.access === 'register' ? json.register : json.other;
  const keys = {
    register: idempotency(deps.idempotency, (ctx) => ({
      scope: sessionOf(ctx)._id,
      maxRecords: config.idempotency.maxRecords,
    })),
    customer: idempotency(deps.idempotency, (ctx) => ({
      scope: sessionOf(ctx)._id,
      maxRecords: config.idempotency.maxCustomerRecords,
    })),
    // Each operator's kept answers are its own: one operator never replays another's (an issued key).
    admin: idempotency(deps.idempotency, (ctx) => {
      const { id } = operatorOfRequest(ctx);
      return { scope: id ? `operator:${id}` : 'admin', maxRecords: config.idempotency.maxRecords };
    }),
  };
  const keysOf = (spec: OperationSpec): Middleware<AppState> =>
    spec.upload ? unkeyed : keys[spec.access as keyof typeof keys];
  return { bodyOf, keysOf };
}

/**
 * The one assembly of every operation's middleware, from its entry in the operation table:
 *
 * 1. the node's bound on requests in flight, by the operation's criticality (before anything that
 *    costs: a shed request costs no authentication and no read; a rejected key leaves it before
 *    its 401 delay);
 * 2. its access: a register's or a customer's key, or an operator's token (then, for a write, its
 *    audit record, whatever the outcome), its role and bound access;
 * 3. for a queued write, its admission to its partition of the transition queue, decided here once,
 *    on what the node holds, before its body is read or anything is asked of Redis or MongoDB (a
 *    refusal costs nothing more); the job client queues the job on the ticket (overload/admitted.ts);
 * 4. a key's rate limit (RATE_LIMIT: a Redis command, so after the admission);
 * 5. for a write, its JSON body and its `Idempotency-Key` (claimed when the handler begins its
 *    work), kept per session (customers, whose keys sit on phones, hold fewer) or per operator; a
 *    menu upload has MENU_BODY_LIMIT and no key (spec.ts `upload`).
 */
export function requestPipeline(deps: ApiDeps) {
  const { config } = deps;
  const { bodyOf, keysOf } = writeParts(deps);
  const register: Stack = [requireSession(deps.sessionLookup, 'SERVICE', deps.presence.sighted)];
  const customer: Stack = [requireSession(deps.sessionLookup, 'CUSTOMER')];
  const operator = authenticateOperator(deps);
  const audit = auditWrites({
    audit: deps.repos.audit,
    retentionMs: config.audit.retentionMs,
    writes: deps.metrics.auditWrites,
  });
  const admitJob = (spec: OperationSpec) => admitQueued(deps, spec);

  const accessOf = (spec: OperationSpec, write: boolean): Stack => {
    switch (spec.access) {
      case 'public':
        return [];
      case 'register':
        return register;
      case 'customer':
        return customer;
      case 'admin':
        if (!spec.role || !spec.bound) throw new Error(`operation ${spec.id} has no role or bound access`);
        return [operator, ...(write ? [audit] : []), allowRole(spec.role), allowBound(spec.bound)];
      case 'board':
        throw new Error(`operation ${spec.id} is Bull Board's own app, not a route`);
    }
  };

  return {
    of(spec: OperationSpec): Stack {
      const write = spec.method !== 'get';
      return [
        deps.inFlight.guard(spec.criticality),
        ...accessOf(spec, write),
        ...(spec.traits?.includes('queued') ? [admitJob(spec)] : []),
        ...(spec.access === 'register' || spec.access === 'customer' ? [deps.rateLimit] : []),
        ...(write && spec.access !== 'public' ? [bodyOf(spec), keysOf(spec)] : []),
      ];
    },
  };
}

export type RequestPipeline = ReturnType<typeof requestPipeline>;
