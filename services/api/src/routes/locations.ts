import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { LOCATION_OPERATIONS } from '@pos/shared/openapi/operations';
import { validators } from '@pos/shared/schemas/requests';
import { queryValidators } from '@pos/shared/schemas/queries';
import { toLocationView } from '@pos/shared/domain/views';
import { auditChange, auditDone, changed, locationFields } from '../audit/change';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { checkLocation, listScope, locationOf } from './admin-access';
import type { Handlers } from './mount';
import { queryOf, sendPage } from './pages';

const NOT_FOUND = () => new ProblemError(problems.notFound('Location does not exist'));

/** Locations created, listed, read and changed. */
function locationRecords(
  deps: Pick<ApiDeps, 'services'>,
): Pick<Handlers<typeof LOCATION_OPERATIONS>, 'createLocation' | 'listLocations' | 'getLocation' | 'updateLocation'> {
  const { locations } = deps.services;
  return {
    createLocation: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.location);
      await beginWork(ctx);
      const location = await locations.create(input, ctx.state.log);
      auditChange(ctx, { id: location._id, after: locationFields(location) });
      ctx.status = 201;
      ctx.body = toLocationView(location);
    },

    listLocations: async (ctx: AppContext) => {
      const page = queryOf(ctx, queryValidators.locationList);
      const now = new Date();
      const found = await locations.list(page, { within: listScope(ctx), online: page.online });
      sendPage(
        ctx,
        found.map((doc) => toLocationView(doc, now)),
        page.limit,
        (last) => last.id,
      );
    },

    getLocation: async (ctx: AppContext) => {
      ctx.body = toLocationView(await locationOf(ctx, locations));
    },

    updateLocation: async (ctx: AppContext) => {
      const changes = bodyOf(ctx, validators.locationUpdate);
      await beginWork(ctx);
      const before = await locationOf(ctx, locations);
      const location = await locations.update(before._id, changes, ctx.state.log);
      if (!location) throw NOT_FOUND();
      auditChange(ctx, changed(locationFields(before), locationFields(location)));
      ctx.body = toLocationView(location);
    },
  };
}

/** A location's presence, its pause and resume. */
function locationService(
  deps: Pick<ApiDeps, 'services'>,
): Pick<Handlers<typeof LOCATION_OPERATIONS>, 'getLocationPresence' | 'pauseLocation' | 'resumeLocation'> {
  const { locations } = deps.services;
  return {
    getLocationPresence: async (ctx: AppContext) => {
      ctx.body = await locations.presence(await locationOf(ctx, locations));
    },

    pauseLocation: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.pause);
      const now = new Date();
      const until = input.until === undefined ? undefined : new Date(input.until);
      if (until && until <= now) throw new ProblemError(problems.validation('until must be in the future'));
      await beginWork(ctx);
      const id = String(ctx.params.id);
      checkLocation(ctx, id);
      const location = await locations.pause(id, { until, reason: input.reason }, now, ctx.state.log);
      if (!location) throw NOT_FOUND();
      auditDone(ctx, id, {
        paused: true,
        ...(until && { until: until.toISOString() }),
        ...(input.reason !== undefined && { reason: input.reason }),
      });
      ctx.body = toLocationView(location, now);
    },

    resumeLocation: async (ctx: AppContext) => {
      await beginWork(ctx);
      const resumed = await locations.resume(await locationOf(ctx, locations), ctx.state.log);
      auditDone(ctx, resumed._id, { paused: false });
      ctx.body = toLocationView(resumed);
    },
  };
}

/** Locations (the admin API): create, list, read, change, their presence, pause and resume. */
export function locationHandlers(deps: Pick<ApiDeps, 'services'>): Handlers<typeof LOCATION_OPERATIONS> {
  return { ...locationRecords(deps), ...locationService(deps) };
}
