import { ParsedUrlQuery, parse } from 'node:querystring';
import type { ParameterizedContext } from 'koa';
import type { Logger } from '@pos/shared/log';
import type { Role } from '@pos/shared/auth/roles';
import type { AuditChange } from '@pos/shared/schemas/responses';
import type { ShedReason } from './overload/shed';
import type { Admitted } from './overload/queue-admission';
import type { SessionDoc } from '@pos/shared/store/documents';

/** Who makes an operator request: root (ADMIN_TOKEN, no id) or an operator account. */
export interface Operator {
  id?: string;
  name: string;
  role: Role;
  /** The locations it covers; absent: all. */
  locationIds?: readonly string[];
}

/** What middleware puts on `ctx.state` for the handlers after it. */
export interface AppState {
  /** The service's id of the request (request-context.ts). */
  requestId: string;
  /** The caller's X-Request-Id, when sane: a claim, logged and audited beside `requestId`. */
  claimedRequestId?: string;
  log: Logger;
  /**
   * Epoch ms: JOB_TIMEOUT from the request's arrival. The waits on its path (a job, a stream's
   * subscription) end by it; see the request-deadline middleware.
   */
  deadline: number;
  /**
   * Set by the node's bound on requests in flight: gives the request's place back before its end
   * (a rejected key, before its 401 delay). Idempotent.
   */
  releaseInFlight?: () => void;
  /** A queued write's admission to the transition queue, decided by its route (overload/admitted.ts). */
  admitted?: Admitted;
  /** Set where the request is shed under overload, for its metrics (`pos_requests_shed_total`). */
  shed?: ShedReason;
  /** Set by the operator authentication of admin routes, Bull Board and /metrics. */
  operator?: Operator;
  /** The location an operator write concerns, once the route knows it (for its audit record). */
  auditLocationId?: string;
  /** What an operator write changed, cleaned of secrets, once the handler knows it (for its audit record). */
  auditChange?: AuditChange;
  /** Set by the api_key authentication of service and customer routes. */
  session?: SessionDoc;
  /** The hash of the key that opened it (a rotated-out key works only until its grace ends). */
  keyHash?: string;
  /**
   * Set by the idempotency middleware when the request carries an Idempotency-Key: the identity
   * of this request, which its queued job and created records carry so that a retry is
   * recognised even where its first attempt's answer was lost.
   */
  idempotencyId?: string;
  /**
   * Set by the idempotency middleware on every write route; the handler awaits it (through
   * `beginWork`) once its input is checked: there the Idempotency-Key is claimed, or the request
   * ends with a kept answer or a refusal.
   */
  beginWork?: () => Promise<void>;
  /**
   * Set by a handler whose response goes on after it returns (the event stream): the access line
   * and the request's metrics are recorded when this resolves (it never rejects). The handler
   * returns at once, so that nothing of the request's middleware stays in memory for the
   * stream's whole life.
   */
  ending?: Promise<unknown>;
}

export type AppContext = ParameterizedContext<AppState>;

export function sessionOf(ctx: AppContext): SessionDoc {
  if (!ctx.state.session) throw new Error('route is missing its authentication middleware');
  return ctx.state.session;
}

/**
 * The query string, parsed as Koa's `ctx.query` is but not cached on the request: an event
 * stream's request lives as long as the stream, and so would the cache.
 */
export function queryOf(ctx: AppContext): ParsedUrlQuery {
  return ctx.querystring === '' ? {} : parse(ctx.querystring);
}
