import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { SESSION_OPERATIONS } from '@pos/shared/openapi/operations';
import { JOB } from '@pos/shared/queue/jobs';
import { queryValidators, validators } from '@pos/shared/schemas/requests';
import type { SessionDoc } from '@pos/shared/store/documents';
import { isId } from '@pos/shared/store/query-values';
import { toSessionView } from '@pos/shared/store/sessions';
import { SessionKeys } from '../auth/session-keys';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { checkLocation, locationOf } from './admin-access';
import type { Handlers } from './mount';
import { queryOf, sendPage } from './pages';
import { sendOutcome } from './respond';

/** A location's sessions and their keys (the admin API): list, issue, rotate, close. */
export function sessionHandlers(deps: ApiDeps): Handlers<typeof SESSION_OPERATIONS> {
  const keys = new SessionKeys({
    sessions: deps.sessions,
    events: deps.events,
    newApiKey: deps.newApiKey,
    keyRotationGraceMs: deps.config.auth.keyRotationGraceMs,
  });

  /** The session the path names, in the operator's scope: a 404 otherwise. */
  const pathSession = async (ctx: AppContext): Promise<SessionDoc> => {
    const sessionId = String(ctx.params.sessionId);
    const session = isId(sessionId) ? await deps.sessions.find(sessionId) : null;
    if (!session) throw new ProblemError(problems.notFound('Session does not exist'));
    checkLocation(ctx, session.locationId, 'Session does not exist');
    return session;
  };

  return {
    listSessions: async (ctx: AppContext) => {
      const location = await locationOf(ctx, deps);
      const page = queryOf(ctx, queryValidators.idPage);
      sendPage(ctx, (await deps.sessions.listByLocation(location._id, page)).map(toSessionView), page.limit, (last) => last.sessionId);
    },

    createServiceSession: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.serviceSession);
      const expiresAt = input.expiresAt ? new Date(input.expiresAt) : undefined;
      await beginWork(ctx);
      const location = await locationOf(ctx, deps);
      ctx.body = await keys.issue({ type: 'SERVICE', locationId: location._id, deviceId: input.deviceId, expiresAt }, ctx.state.log);
      ctx.status = 201;
    },

    createCustomerSession: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.customerSession);
      await beginWork(ctx);
      const location = await locationOf(ctx, deps);
      const expiresAt = new Date(Date.now() + deps.config.auth.customerSessionTtlMs);
      ctx.body = await keys.issue({ type: 'CUSTOMER', locationId: location._id, userNumber: input.userNumber, tableNumber: input.tableNumber, expiresAt }, ctx.state.log);
      ctx.status = 201;
    },

    rotateSessionKey: async (ctx: AppContext) => {
      await beginWork(ctx);
      ctx.body = await keys.rotate(await pathSession(ctx), ctx.state.log);
    },

    closeSession: async (ctx: AppContext) => {
      await beginWork(ctx);
      const { _id: sessionId } = await pathSession(ctx);
      const outcome = await deps.jobs.run({ name: JOB.sessionClose, data: { sessionId } }, ctx.state);
      sendOutcome(ctx, outcome);
    },
  };
}
