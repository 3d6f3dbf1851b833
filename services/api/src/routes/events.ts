import type { EVENT_OPERATIONS } from '@pos/shared/openapi/operations';
import { queryValidators } from '@pos/shared/schemas/queries';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { checkLocation, listScope } from './admin-access';
import type { Handlers } from './mount';
import { queryOf, sendPage } from './pages';

/** The event feed (docs/webhooks.md#the-event-feed): an operator bound to locations reads theirs alone. */
export function eventHandlers(deps: Pick<ApiDeps, 'services'>): Handlers<typeof EVENT_OPERATIONS> {
  const { eventFeed } = deps.services;
  return {
    listEvents: async (ctx: AppContext) => {
      const query = queryOf(ctx, queryValidators.eventFeed);
      // a location outside the operator's scope is refused as a missing one
      if (query.locationId !== undefined) checkLocation(ctx, query.locationId);
      sendPage(ctx, await eventFeed.page(query, listScope(ctx)), query.limit, (last) => last.id);
    },
  };
}
