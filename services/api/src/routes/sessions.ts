import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { SESSION_OPERATIONS } from '@pos/shared/openapi/operations';
import { validators } from '@pos/shared/schemas/requests';
import { queryValidators } from '@pos/shared/schemas/queries';
import type { SessionDoc } from '@pos/shared/store/documents';
import { isId } from '@pos/shared/store/query-values';
import { toSessionView } from '@pos/shared/domain/views';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { auditDone, sessionFields } from '../audit/change';
import { checkLocation, locationOf } from './admin-access';
import type { Handlers } from './mount';
import { queryOf, sendPage } from './pages';
import { sendOutcome } from './respond';

/** The session the path names, in the operator's scope: a 404 otherwise. */
async function pathSession(sessions: ApiDeps['services']['sessions'], ctx: AppContext): Promise<SessionDoc> {
  const sessionId = String(ctx.params.sessionId);
  const session = isId(sessionId) ? await sessions.find(sessionId) : null;
  if (!session) throw new ProblemError(problems.notFound('Session does not exist'));
  checkLocation(ctx, session.locationId, 'Session does not exist');
  return session;
}

/** A location's sessions, listed and issued. */
function sessionIssue(
  deps: Pick<ApiDeps, 'services' | 'config'>,
): Pick<Handlers<typeof SESSION_OPERATIONS>, 'listSessions' | 'createServiceSession' | 'createCustomerSession'> {
  const { sessions, locations } = deps.services;
  return {
    listSessions: async (ctx: AppContext) => {
      const location = await locationOf(ctx, locations);
      const page = queryOf(ctx, queryValidators.idPage);
      sendPage(ctx, (await sessions.list(location._id, page)).map(toSessionView), page.limit, (last) => last.sessionId);
    },

    createServiceSession: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.serviceSession);
      const expiresAt = input.expiresAt ? new Date(input.expiresAt) : undefined;
      if (expiresAt && expiresAt <= new Date())
        throw new ProblemError(problems.validation('expiresAt must be in the future'));
      await beginWork(ctx);
      const location = await locationOf(ctx, locations);
      const issued = await sessions.issue(
        { type: 'SERVICE', locationId: location._id, deviceId: input.deviceId, expiresAt },
        ctx.state.log,
      );
      auditDone(ctx, issued.sessionId, sessionFields(issued));
      ctx.body = issued;
      ctx.status = 201;
    },

    createCustomerSession: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.customerSession);
      await beginWork(ctx);
      const location = await locationOf(ctx, locations);
      const expiresAt = new Date(Date.now() + deps.config.auth.customerSessionTtlMs);
      const issued = await sessions.issue(
        {
          type: 'CUSTOMER',
          locationId: location._id,
          userNumber: input.userNumber,
          tableNumber: input.tableNumber,
          expiresAt,
        },
        ctx.state.log,
      );
      auditDone(ctx, issued.sessionId, sessionFields(issued));
      ctx.body = issued;
      ctx.status = 201;
    },
  };
}

/** A session's key rotated, the session closed. */
function sessionKeys(
  deps: Pick<ApiDeps, 'services'>,
): Pick<Handlers<typeof SESSION_OPERATIONS>, 'rotateSessionKey' | 'closeSession'> {
  const { sessions, transitions } = deps.services;
  return {
    rotateSessionKey: async (ctx: AppContext) => {
      await beginWork(ctx);
      const rotated = await sessions.rotate(await pathSession(sessions, ctx), ctx.state.log);
      auditDone(ctx, rotated.sessionId, { keyRotated: true, previousKeyExpiresAt: rotated.previousKeyExpiresAt });
      ctx.body = rotated;
    },

    closeSession: async (ctx: AppContext) => {
      await beginWork(ctx);
      const { _id: sessionId } = await pathSession(sessions, ctx);
      sendOutcome(ctx, await transitions.closeSession(ctx.state, sessionId));
      auditDone(ctx, sessionId, { closed: true });
    },
  };
}

/** A location's sessions and their keys (the admin API): list, issue, rotate, close. */
export function sessionHandlers(deps: Pick<ApiDeps, 'services' | 'config'>): Handlers<typeof SESSION_OPERATIONS> {
  return { ...sessionIssue(deps), ...sessionKeys(deps) };
}
