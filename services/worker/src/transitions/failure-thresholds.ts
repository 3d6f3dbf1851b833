/**
 * Each location's failure threshold, as a failure report needs it: kept by this worker until the
 * location is said to have changed (location-changes.ts), so that a report costs its order's
 * write alone rather than a read of the location before it. A change is published before it is
 * answered, and the cache answers only while its subscriber is known to be current
 * (pubsub/change-cache.ts): a new threshold holds from the next report on, as when it was read
 * every time.
 */
import type { Counter } from 'prom-client';
import { locationsChannel } from '@pos/shared/events/location-changes';
import type { Logger } from '@pos/shared/log';
import { ChangeCache, type ChangeFeed } from '@pos/shared/pubsub/change-cache';
import type { LocationsRepo } from '@pos/shared/store/locations';
import { pause } from '@pos/shared/util/pause';
import { DoublingPause } from '@pos/shared/util/doubling-pause';

/** Locations kept at most: a worker's share of a chain's locations, and then some. */
const MAX_LOCATIONS = 20_000;
/** A failed subscription is tried again after this, doubling up to the cap. */
const RETRY_MS = [100, 5_000] as const;

interface KnownThreshold {
  _id: string;
  /** Absent for a location created without one: the default (FAILURE_THRESHOLD) holds. */
  failureThreshold?: number;
}

export class FailureThresholds {
  private readonly cache: ChangeCache<KnownThreshold>;
  private readonly stopping = new AbortController();
  private started: Promise<void> | undefined;

  constructor(
    private readonly locations: Pick<LocationsRepo, 'failureThreshold'>,
    feed: ChangeFeed,
    prefix: string,
    /** FAILURE_THRESHOLD. */
    private readonly fallback: number,
    /** Thresholds answered, by where from: `cache` or `mongodb`. */
    private readonly answered: Counter<'from'>,
  ) {
    this.cache = new ChangeCache({ feed, channel: locationsChannel(prefix), max: MAX_LOCATIONS });
  }

  /**
   * Listens to the changes, trying again until it does: until then (and whenever the subscriber is
   * not current) every report reads its threshold.
   */
  start(log: Logger): void {
    this.started ??= (async () => {
      for (const wait = new DoublingPause(RETRY_MS); !this.stopping.signal.aborted;) {
        try {
          return await this.cache.start();
        } catch (err) {
          log.warn({ err }, 'not listening to location changes yet: failure reports read their thresholds');
          await pause(wait.take(), this.stopping.signal);
        }
      }
    })();
  }

  /** (A subscription still being tried is left to the subscriber's quit.) */
  stop(): Promise<void> {
    this.stopping.abort();
    return this.cache.stop();
  }

  async of(locationId: string): Promise<number> {
    const known = this.cache.get(locationId);
    if (known) {
      this.answered.inc({ from: 'cache' });
      return known.failureThreshold ?? this.fallback;
    }
    const keep = this.cache.beginRead();
    const failureThreshold = await this.locations.failureThreshold(locationId);
    keep(locationId, failureThreshold === undefined ? { _id: locationId } : { _id: locationId, failureThreshold });
    this.answered.inc({ from: 'mongodb' });
    return failureThreshold ?? this.fallback;
  }
}
