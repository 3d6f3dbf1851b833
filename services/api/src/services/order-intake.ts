import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { Admission, LocationsRepo } from '@pos/shared/store/locations';
import { isPaused } from '@pos/shared/domain/pause';

/**
 * The intake of customers' orders: whether a location takes one now (a create, a submit): not
 * while it is paused (a pause with `until` ends by itself at that time, checked here), nor, under PAUSE_WHEN_OFFLINE,
 * while it is not online as last announced. Throws the 409 `Location not accepting orders`,
 * whose detail says until when. Checked before the request's Idempotency-Key is claimed: a
 * refusal changes nothing, and a retry once the location takes orders again goes through.
 * Registers, operators and counter orders are never checked: the kitchen finishes what it has.
 */
export class OrderIntake {
  constructor(private readonly deps: { locations: Pick<LocationsRepo, 'admission'>; pauseWhenOffline: boolean }) {}

  /** What the intake reads of a location, which the menu rules read too (one read for both). */
  read(locationId: string): Promise<Admission | null> {
    return this.deps.locations.admission(locationId);
  }

  /** Throws unless the location takes customers' orders now. */
  check(location: Admission | null, now = new Date()): void {
    if (!location) return; // the request's own read answers for a location that is gone
    if (isPaused(location, now)) {
      const until = location.pausedUntil
        ? `until ${location.pausedUntil.toISOString()}`
        : 'until an operator resumes it';
      const reason = location.pauseReason === undefined ? '' : ` (${location.pauseReason})`;
      throw new ProblemError(problems.notAccepting(`Location is paused ${until}${reason}`));
    }
    if (this.deps.pauseWhenOffline && location.online !== true) {
      throw new ProblemError(
        problems.notAccepting('Location is offline (no register is receiving orders) until a register connects again'),
      );
    }
  }
}
