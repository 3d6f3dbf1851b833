import { createHash } from 'node:crypto';
import type { Next } from 'koa';
import { limitReached, ProblemError, problems } from '@pos/shared/domain/problem';
import { storeProblem } from '@pos/shared/store/store-errors';
import { withTimeout } from '@pos/shared/util/timeout';
import type { AppContext } from '../context';
import type { IdempotencyKeyRef, IdempotencyStore, KeptResponse } from '../idempotency/idempotency-store';
import { sendProblem } from './problems';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;
/** How long an answer waits for its record to be kept or released. */
const RECORD_WAIT_MS = 500;

/** Answers that say nothing was done (or that nobody knows yet): not kept, so a retry does the work. */
const notFinal = (status: number) => status >= 500 || status === 429;

/** Whose keys these are, and how many records they may hold at once. */
export type IdempotencyScope = Pick<IdempotencyKeyRef, 'scope' | 'maxRecords'>;

/** Thrown by `beginWork` once a kept answer is replayed: the handler stops, the answer stands. */
class Replayed extends Error {}

function fingerprintOf(ctx: AppContext): string {
  const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
  return createHash('sha256').update(`${ctx.method}\n${ctx.path}\n`).update(raw).digest('hex');
}

/** The identity of this very request: what its queued job and created records carry. */
function requestIdentity(ref: IdempotencyKeyRef, fingerprint: string): string {
  return createHash('sha256').update(`${ref.scope}\n${ref.key}\n${fingerprint}`).digest('hex');
}

/**
 * Called by every write handler once its input is checked, right before its first effect (the
 * first read of the work included): the point from which the request's answer is kept.
 */
export async function beginWork(ctx: AppContext): Promise<void> {
  if (!ctx.state.beginWork) throw new Error('write route is missing its idempotency middleware');
  await ctx.state.beginWork();
}

/**
 * `Idempotency-Key` on a write (IETF draft "The Idempotency-Key HTTP Header Field"): the first
 * request with a key is processed and its final answer kept; a repeat of the same request
 * (method, path, body) gets that answer back with `Idempotent-Replayed: true`, on any node; the
 * same key on another request is a 422, and while the first is still processed a 409. Runs
 * after authentication (keys are scoped to the caller) and body parsing (the body is part of the
 * request). Without the header, nothing changes.
 *
 * Only a request that reaches its work is kept (Stripe's rule): the key is not claimed here but
 * when the handler calls `beginWork` (after checking its path, body and table), so a refused
 * request (400), like a 401 or a 429 before it, leaves nothing in Redis and a flood of them
 * costs no memory. This rather than validating in a middleware before this one: the checks
 * stay in the handlers beside the input they produce (a path number, a table of the session's),
 * with one definition each. A handler that answers without having called `beginWork` is a bug,
 * and a 500 (with or without the header), so no write route can forget it unnoticed. Each scope
 * (a session, or the admin token) holds at most `maxRecords` records at once: beyond, a 429
 * with `Retry-After` until its oldest expires.
 */
export function idempotency(store: IdempotencyStore, scopeOf: (ctx: AppContext) => IdempotencyScope) {
  return async function idempotencyMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const key = ctx.get(IDEMPOTENCY_KEY_HEADER);
    const keyed = key !== '' || ctx.headers['idempotency-key'] !== undefined;
    if (keyed && !VALID_KEY.test(key)) {
      throw new ProblemError(problems.validation('Idempotency-Key must be 1 to 255 printable ASCII characters'));
    }

    let begun: Promise<void> | undefined;
    let claim: Claim | undefined;
    const begin = async (): Promise<void> => {
      if (keyed) claim = await claimKey(store, ctx, { ...scopeOf(ctx), key });
    };
    ctx.state.beginWork = () => (begun ??= begin());

    try {
      await next();
    } catch (err) {
      if (err instanceof Replayed) return;
      // Refused before its work (or its key refused): nothing was claimed, nothing is kept.
      if (!claim) throw err;
      // Rendered here, not by the outer problem renderer, so that the answer can be kept.
      if (!(err instanceof ProblemError)) {
        await settle(store.release(claim.ref, claim.token), ctx);
        throw err;
      }
      sendProblem(ctx, err.problem, err.headers);
    }
    if (!begun) throw new Error(`${ctx.method} ${ctx.path} answered without calling beginWork()`);
    if (!claim) return;
    if (notFinal(ctx.status)) {
      await settle(store.release(claim.ref, claim.token), ctx);
      return;
    }
    await settle(store.complete(claim.ref, claim.fingerprint, keep(ctx)), ctx);
  };
}

/**
 * A write whose answer is never kept (a menu upload:
 * openapi/operations/spec.ts `upload`): its work begins with nothing to claim.
 */
export async function unkeyed(ctx: AppContext, next: Next): Promise<void> {
  ctx.state.beginWork = () => Promise.resolve();
  await next();
}

/** A key this request claimed: its answer is kept, or the key released, once known. */
interface Claim {
  ref: IdempotencyKeyRef;
  fingerprint: string;
  token: string;
}

/**
 * Claims the key for this request, or ends the request with what the key is bound to: a kept
 * answer replayed (`Replayed`), another request's (422), one still processed (409), the caller's
 * quota of records (429), or Redis not answering (503, nothing claimed and nothing done).
 */
async function claimKey(store: IdempotencyStore, ctx: AppContext, ref: IdempotencyKeyRef): Promise<Claim> {
  const fingerprint = fingerprintOf(ctx);
  const found = await store.begin(ref, fingerprint).catch((err: unknown) => {
    // Redis down or hung: the key was not claimed (or will be, when Redis wakes, and then lapse), and nothing ran.
    if (storeProblem(err, '')?.status !== 503) throw err;
    ctx.state.log.warn({ err: (err as Error).message }, 'idempotency record not claimed; request not processed');
    throw new ProblemError(problems.notProcessed());
  });
  switch (found.kind) {
    case 'mismatch':
      throw new ProblemError(problems.idempotencyKeyReused());
    case 'outstanding':
      throw new ProblemError(problems.idempotencyKeyOutstanding(), { 'Retry-After': '1' });
    case 'full': {
      const seconds = Math.max(1, Math.ceil(found.retryAfterMs / 1000));
      throw limitReached(problems.idempotencyRecordsExhausted(ref.maxRecords, seconds).detail, seconds);
    }
    case 'replay':
      replay(ctx, found.response);
      ctx.state.log.info({ status: found.response.status }, 'idempotent replay');
      throw new Replayed();
    case 'first':
      ctx.state.idempotencyId = requestIdentity(ref, fingerprint);
      return { ref, fingerprint, token: found.token };
  }
}

/** The answer as it will be sent; an object body is serialised here so that replays are byte-identical. */
function keep(ctx: AppContext): KeptResponse {
  if (ctx.body !== undefined && ctx.body !== null && typeof ctx.body !== 'string') ctx.body = JSON.stringify(ctx.body);
  return {
    status: ctx.status,
    contentType: ctx.response.get('Content-Type') || undefined,
    body: (ctx.body as string | undefined) ?? '',
  };
}

function replay(ctx: AppContext, response: KeptResponse): void {
  ctx.status = response.status;
  ctx.set('Idempotent-Replayed', 'true');
  if (response.contentType) ctx.set('Content-Type', response.contentType);
  if (response.body !== '') ctx.body = response.body;
}

/**
 * The answer goes out whatever Redis does now, after at most RECORD_WAIT_MS (the request's
 * deadline is near); a key left claimed frees itself after its lock time.
 */
async function settle(step: Promise<unknown>, ctx: AppContext): Promise<void> {
  try {
    await withTimeout(step, RECORD_WAIT_MS, 'the idempotency record');
  } catch (err) {
    ctx.state.log.warn({ err: (err as Error).message }, 'could not record the idempotent answer');
  }
}
