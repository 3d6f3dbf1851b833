import { ProblemError, problems } from '@pos/shared/domain/problem';

/** Why a request was shed: the node's requests in flight, or a queue's admission (refusal.ts). */
export type ShedReason = 'in-flight' | 'queue';

/** A refusal's `Retry-After`: whole seconds, at least one. */
export const retryAfterOf = (seconds: number): number => Math.max(1, Math.ceil(seconds));

/**
 * A request refused by the node's bound on requests in flight, before any of it was done: a 503
 * that says so, with `Retry-After`. A queued write refused by its partition's admission is
 * answered by queueRefusal instead (refusal.ts), in the app and in front of it alike.
 */
export class ShedError extends ProblemError {
  constructor(retryAfterSeconds: number) {
    const seconds = retryAfterOf(retryAfterSeconds);
    super(problems.overloaded('request', seconds), { 'Retry-After': String(seconds) });
  }
}

/** Refuses the request under overload: marks it shed (for its metrics, `pos_requests_shed_total`) and throws. */
export function shed(state: { shed?: ShedReason }, retryAfterSeconds: number): never {
  state.shed = 'in-flight';
  throw new ShedError(retryAfterSeconds);
}
