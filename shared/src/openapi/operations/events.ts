/** The event feed (docs/webhooks.md#the-event-feed). One entry per operation, by its id (spec.ts). */
import { problems } from '../../domain/problem';
import { eventFeedQuerySchema } from '../../schemas/queries';
import { eventSchema } from '../../schemas/feed-event';
import { examples } from '../examples';
import { arrayOf, defineOperations, json, paged } from './spec';

export const EVENT_OPERATIONS = defineOperations({
  listEvents: {
    method: 'get',
    path: '/admin/v1/events',
    tag: 'Admin',
    summary: 'Read the event feed',
    description:
      `${paged} Oldest first: every event the service's changes implied (the ` +
      'webhook types), each once, each as its webhook body ' +
      'carries it. A consumer that pages with `after` never misses one, ' +
      'whatever is recorded meanwhile; a consumer that was away ' +
      'catches up from the last `id` it saw. Kept `EVENT_RETENTION` (30 ' +
      'days): an `after` older than that (or unknown) is a 400.',
    access: 'admin',
    criticality: 'sheddable',
    role: 'viewer',
    bound: 'locations',
    boundNote: "reads its locations' events only; a `locationId` outside them answers 404, as a missing location",
    traits: ['paged'],
    query: eventFeedQuerySchema,
    ok: { status: 200, description: 'A page of events', content: json(arrayOf(eventSchema), [examples.event]) },
    problems: [
      problems.eventNotKept(),
      problems.unknownEventType('order.eaten'),
      problems.notFound('Location does not exist'),
    ],
  },
});
