import type { LocationChange, Announcer } from '@pos/shared/events/announcements';
import { locationOutbox } from '@pos/shared/events/outbox';
import type { Logger } from '@pos/shared/log';
import { readPresence } from '@pos/shared/presence/presence-store';
import type { RedisClient } from '@pos/shared/redis';
import type { LocationUpdateInput } from '@pos/shared/schemas/requests';
import type { PresenceView } from '@pos/shared/schemas/responses';
import type { LocationDoc } from '@pos/shared/store/documents';
import type { LocationsRepo } from '@pos/shared/store/locations';
import type { Page } from '@pos/shared/store/page';

export interface LocationsDeps {
  locations: Pick<LocationsRepo, 'create' | 'find' | 'missing' | 'list' | 'update' | 'pause' | 'resume'>;
  announcer: Pick<Announcer, 'location' | 'locationChanged'>;
  /** Where the nodes write the registers they see (presence). */
  redis: RedisClient;
  prefix: string;
  /** PRESENCE_WINDOW. */
  presenceWindowMs: number;
  /** FAILURE_THRESHOLD, for a location created without one. */
  failureThreshold: number;
}

/**
 * Locations: created, listed, changed, their presence, paused and resumed (each pause and resume
 * recorded as an event with its write, and announced to the location's streams).
 */
export class Locations {
  constructor(private readonly deps: LocationsDeps) {}

  async create(input: { name: string; failureThreshold?: number }, log: Logger): Promise<LocationDoc> {
    const location = await this.deps.locations.create(
      input.name,
      input.failureThreshold ?? this.deps.failureThreshold,
      new Date(),
    );
    log.info({ locationId: location._id }, 'location created');
    return location;
  }

  /** Those of `ids` that name no location. */
  missing(ids: readonly string[]): Promise<string[]> {
    return this.deps.locations.missing(ids);
  }

  find(id: string): Promise<LocationDoc | null> {
    return this.deps.locations.find(id);
  }

  list(page: Page<string>, options: { within?: readonly string[]; online?: boolean }): Promise<LocationDoc[]> {
    return this.deps.locations.list(page, options);
  }

  /**
   * Workers keep each location's threshold until told it changed: told before the change is
   * answered, so that it holds from the next failure report on (a failed publish fails the
   * request; the workers then see the change within their cache's bound, a minute).
   */
  async update(id: string, changes: LocationUpdateInput, log: Logger): Promise<LocationDoc | null> {
    const location = await this.deps.locations.update(id, changes);
    if (!location) return null;
    log.info({ locationId: location._id, changes }, 'location updated');
    await this.deps.announcer.locationChanged(location._id);
    return location;
  }

  /**
   * The registers seen within PRESENCE_WINDOW, read from Redis as the nodes wrote them. Since: the
   * announced state's start while it agrees; a change not yet announced (the worker's sweep does,
   * within a quarter of the window) is seen now.
   */
  async presence(location: LocationDoc): Promise<PresenceView> {
    const now = Date.now();
    const presence = await readPresence(
      this.deps.redis,
      this.deps.prefix,
      location._id,
      this.deps.presenceWindowMs,
      now,
    );
    const since =
      presence.online === (location.online === true) ? (location.onlineSince ?? location.createdAt) : new Date(now);
    return { online: presence.online, since: since.toISOString(), registers: presence.registers };
  }

  async pause(
    id: string,
    input: { until?: Date; reason?: string },
    now: Date,
    log: Logger,
  ): Promise<LocationDoc | null> {
    const location = await this.deps.locations.pause(id, { until: input.until, reason: input.reason }, now, (after) =>
      locationOutbox(after, 'paused', now),
    );
    if (!location) return null;
    log.info({ locationId: location._id, until: input.until, reason: input.reason }, 'location paused');
    await this.announce(location, 'paused', log);
    return location;
  }

  /** The location as resumed, or as it was when it was not paused. */
  async resume(location: LocationDoc, log: Logger): Promise<LocationDoc> {
    const now = new Date();
    const resumed = await this.deps.locations.resume(location._id, now, undefined, (after) =>
      locationOutbox(after, 'resumed', now),
    );
    if (!resumed) return location;
    log.info({ locationId: location._id }, 'location resumed');
    await this.announce(resumed, 'resumed', log);
    return resumed;
  }

  /** The change is stored: a lost announcement must not fail the request (the board reads the location again). */
  private async announce(location: LocationDoc, change: LocationChange, log: Logger): Promise<void> {
    try {
      await this.deps.announcer.location(location, change);
    } catch (err) {
      log.warn({ err, change }, 'could not announce the location change');
    }
  }
}
