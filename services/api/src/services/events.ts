import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { EventFeedQuery } from '@pos/shared/schemas/queries';
import type { FeedEvent } from '@pos/shared/schemas/feed-event';
import type { EventLogRepo } from '@pos/shared/store/event-log';
import { WEBHOOK_EVENT_TYPES } from '@pos/shared/webhooks/event-types';
import { eventBody } from '@pos/shared/webhooks/fan-out';

/**
 * The event feed: the event log, oldest first, each event as its webhook body carries it
 * (store/event-log.ts says why a consumer paging with `after` never misses one).
 */
export class EventFeed {
  constructor(private readonly events: Pick<EventLogRepo, 'page' | 'seqOf'>) {}

  /**
   * A page after the event `after`, within `within` (an operator's locations; absent: all), of
   * the location and types asked for. A 400 for an unknown type, or an `after` the feed no longer
   * holds or the reader cannot see (a consumer away longer than EVENT_RETENTION has lost events, and must be told).
   */
  async page(query: EventFeedQuery, within: readonly string[] | undefined): Promise<FeedEvent[]> {
    const types = query.types?.split(',').map((type) => type.trim());
    for (const type of types ?? [])
      if (!WEBHOOK_EVENT_TYPES.includes(type)) throw new ProblemError(problems.unknownEventType(type));
    // a cursor into events the reader cannot see is as unknown as one the feed no longer holds
    const afterSeq = query.after === undefined ? undefined : await this.events.seqOf(query.after, within);
    if (query.after !== undefined && afterSeq === undefined) throw new ProblemError(problems.eventNotKept());
    const locationIds = query.locationId !== undefined ? [query.locationId] : within;
    const events = await this.events.page({ afterSeq, locationIds, types, limit: query.limit });
    return events.map((event) => eventBody(event) as FeedEvent);
  }
}
