import { problems } from '@pos/shared/domain/problem';
import type { JobOutcome, SessionCloseJob } from '@pos/shared/queue/jobs';
import type { JobContext } from './context';
import { applyOrderAction } from './order-action';

/**
 * Closes a session: revokes its key, aborts a customer's PLACED orders, and tells every API
 * node to end the session's streams. Each step is idempotent, so a re-run after a crash is safe.
 */
export async function closeSession(ctx: JobContext, job: SessionCloseJob): Promise<JobOutcome> {
  const session = await ctx.sessions.find(job.sessionId);
  if (!session) return { status: 404, problem: problems.notFound('Session does not exist') };

  if (await ctx.sessions.close(session._id, new Date())) {
    ctx.log.info({ sessionId: session._id, type: session.type }, 'session closed');
  }
  // Before the close is answered (and on a re-run too): every API node drops the session from
  // its cache, so no node accepts the key once the close has answered.
  await ctx.events.sessionChanged(session._id);
  if (session.type === 'CUSTOMER') {
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
  await ctx.events.sessionClosed(session.locationId, session._id);
  return { status: 204 };
}
