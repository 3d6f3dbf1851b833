import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { LocationChange } from '@pos/shared/events/location-events';
import type { LOCATION_OPERATIONS } from '@pos/shared/openapi/operations';
import { readPresence } from '@pos/shared/presence/presence-store';
import { queryValidators, validators } from '@pos/shared/schemas/requests';
import type { LocationDoc } from '@pos/shared/store/documents';
import { toLocationView } from '@pos/shared/store/locations';
import { isId } from '@pos/shared/store/query-values';
import { auditChange, changed, locationFields } from '../audit/change';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { checkLocation, listScope, locationOf } from './admin-access';
import type { Handlers } from './mount';
import { queryOf, sendPage } from './pages';

/** Locations (the admin API): create, list, read, change, their presence, pause and resume. */
export function locationHandlers(deps: ApiDeps): Handlers<typeof LOCATION_OPERATIONS> {
  /** The change is stored: a lost announcement must not fail the request (the board reads the location again). */
  const announce = async (ctx: AppContext, location: LocationDoc, change: LocationChange): Promise<void> => {
    try {
      await deps.events.location(location, change);
    } catch (err) {
      ctx.state.log.warn({ err, change }, 'could not announce the location change');
    }
  };

  return {
    createLocation: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.location);
      await beginWork(ctx);
      const location = await deps.locations.create(input.name, input.failureThreshold ?? deps.config.orders.failureThreshold, new Date());
      auditChange(ctx, { id: location._id, after: locationFields(location) });
      ctx.state.log.info({ locationId: location._id }, 'location created');
      ctx.status = 201;
      ctx.body = toLocationView(location);
    },

    listLocations: async (ctx: AppContext) => {
      const page = queryOf(ctx, queryValidators.locationList);
      const now = new Date();
      // only the locations the operator covers
      const locations = await deps.locations.list(page, { within: listScope(ctx), online: page.online });
      sendPage(ctx, locations.map((doc) => toLocationView(doc, now)), page.limit, (last) => last.id);
    },

    getLocation: async (ctx: AppContext) => {
      ctx.body = toLocationView(await locationOf(ctx, deps));
    },

    updateLocation: async (ctx: AppContext) => {
      const changes = bodyOf(ctx, validators.locationUpdate);
      await beginWork(ctx);
      const before = await locationOf(ctx, deps);
      const location = await deps.locations.update(before._id, changes);
      if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
      auditChange(ctx, changed(locationFields(before), locationFields(location)));
      // The worker reads the threshold for each failure report: the change holds from the next one.
      ctx.state.log.info({ locationId: location._id, changes }, 'location updated');
      ctx.body = toLocationView(location);
    },

    // The registers seen within PRESENCE_WINDOW, read from Redis as the nodes wrote them.
    getLocationPresence: async (ctx: AppContext) => {
      const location = await locationOf(ctx, deps);
      const now = Date.now();
      const presence = await readPresence(deps.redis, deps.config.redis.prefix, location._id, deps.config.presence.windowMs, now);
      // The announced state's start while it agrees; a change not yet announced (the worker's
      // sweep does, within a quarter of the window) is seen now.
      const since = presence.online === (location.online === true) ? (location.onlineSince ?? location.createdAt) : new Date(now);
      ctx.body = { online: presence.online, since: since.toISOString(), registers: presence.registers };
    },

    pauseLocation: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.pause);
      const now = new Date();
      const until = input.until === undefined ? undefined : new Date(input.until);
      if (until && until <= now) throw new ProblemError(problems.validation('until must be in the future'));
      await beginWork(ctx);
      checkLocation(ctx, String(ctx.params.id));
      const location = isId(ctx.params.id) ? await deps.locations.pause(ctx.params.id, { until, reason: input.reason }, now) : null;
      if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
      ctx.state.log.info({ locationId: location._id, until, reason: input.reason }, 'location paused');
      await announce(ctx, location, 'paused');
      ctx.body = toLocationView(location, now);
    },

    resumeLocation: async (ctx: AppContext) => {
      await beginWork(ctx);
      const location = await locationOf(ctx, deps);
      const resumed = await deps.locations.resume(location._id);
      if (resumed) {
        ctx.state.log.info({ locationId: location._id }, 'location resumed');
        await announce(ctx, resumed, 'resumed');
      }
      ctx.body = toLocationView(resumed ?? location);
    },
  };
}
