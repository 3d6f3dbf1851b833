import { ProblemError, problems } from '@pos/shared/domain/problem';

/** Why a request was shed: the node's requests in flight, or a queue's admission. */
export type ShedReason = 'in-flight' | 'queue';

/**
 * A request refused under overload before any of it was done: a 503 that says so, with
 * `Retry-After`. Where it is thrown, the request's `state.shed` is set (`shed`), and the request
 * metrics count it (`pos_requests_shed_total`) by its reason and route.
 */
export class ShedError extends ProblemError {
  constructor(
    readonly reason: ShedReason,
    retryAfterSeconds: number,
  ) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super(problems.overloaded(reason === 'queue' ? 'queued' : 'request', seconds), { 'Retry-After': String(seconds) });
  }
}

/** Refuses the request under overload: marks it shed (for its metrics) and throws. */
export function shed(state: { shed?: ShedReason }, reason: ShedReason, retryAfterSeconds: number): never {
  state.shed = reason;
  throw new ShedError(reason, retryAfterSeconds);
}
