import { problems } from '@pos/shared/domain/problem';
import type { JobOutcome, SessionCloseJob } from '@pos/shared/queue/jobs';
import type { JobContext } from './context';
import { applyOrderAction } from './order-action';

/**
 * Closes a session: revokes its key, aborts a customer's PLACED orders, and tells every API
 * node to end the session's streams. Each step is idempotent, so a re-run after a crash is safe.
 *
 * No order of a closed customer session is PLACED once the close has answered, though its submit
 * may run before, during or after the close (submits queue by location, closes by session). In
 * this order: the session is marked closed; the version of its SELECTING and NEW orders moves on;
 * then its PLACED orders are aborted. A finish or submit reads the order, then the session, and
 * writes conditionally on the version read (order-action.ts). One that saw the session closed
 * is refused. One that saw it open read the order before the version moved: its write either
 * lands before that (the order is PLACED when the close reads them, and is aborted) or fails its
 * guard, re-reads and sees the session closed.
 */
export async function closeSession(ctx: JobContext, job: SessionCloseJob): Promise<JobOutcome> {
  const session = await ctx.sessions.find(job.sessionId);
  if (!session) return { status: 404, problem: problems.notFound('Session does not exist') };

  if (await ctx.sessions.close(session._id, new Date())) {
    ctx.log.info({ sessionId: session._id, type: session.type }, 'session closed');
  }
  // Before the close is answered (and on a re-run too): every API node drops the session from
  // its cache, so no node accepts the key once the close has answered.
  await ctx.nodes.sessionChanged(session._id);
  if (session.type === 'CUSTOMER') {
    const touched = await ctx.orders.touchOpenOfSession(session.locationId, session._id, new Date());
    if (touched > 0)
      ctx.log.info({ sessionId: session._id, orders: touched }, 'open orders of the closed session fenced');
    // read after the fence: a submit that wrote before it is PLACED by now
    for (const order of await ctx.orders.placedOfSession(session.locationId, session._id)) {
      const outcome = await applyOrderAction(ctx, {
        scope: { locationId: session.locationId, sessionId: session._id },
        orderNumber: order.number,
        action: { kind: 'session-closed' },
      });
      // Only a race lost again and again ends here; BullMQ retries the whole (idempotent) job.
      if (outcome.status !== 200) throw new Error(`could not abort order ${order.number} (status ${outcome.status})`);
    }
  }
  await ctx.announcer.sessionClosed(session.locationId, session._id);
  return { status: 204 };
}
