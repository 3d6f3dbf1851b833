import type { LocationStatus } from './api';
import { age, clock } from './format';

export interface LocationStatusProps {
  status: LocationStatus;
  now: number;
  busy: boolean;
  onPause(): void;
  onResume(): void;
}

/**
 * Operators: whether a register is listening at the location (and since when), each register
 * seen within the presence window, and the pause, with Pause and Resume
 * (docs/presence-and-deadlines.md).
 */
export function LocationStatusBar({ status, now, busy, onPause, onResume }: LocationStatusProps) {
  const { location, presence } = status;
  return (
    <section class="location-status" aria-label="Location status">
      <p class="presence" data-online={location.online}>
        <span class="dot" aria-hidden="true" />
        {location.online ? 'Online' : 'Offline'} since <time dateTime={location.since}>{clock(location.since)}</time>
      </p>
      <p class="pause" data-paused={location.paused}>
        {location.paused
          ? `Paused${location.pausedUntil ? ` until ${clock(location.pausedUntil)}` : ''}${location.pauseReason ? ` (${location.pauseReason})` : ''}: customers are refused`
          : 'Taking orders'}
        {location.paused ? (
          <button type="button" class="quiet" disabled={busy} onClick={onResume}>
            Resume
          </button>
        ) : (
          <button type="button" class="quiet" disabled={busy} onClick={onPause}>
            Pause
          </button>
        )}
      </p>
      <ul class="registers" aria-label="Registers seen">
        {presence.registers.length === 0 && <li>No register seen lately</li>}
        {presence.registers.map((register) => (
          <li key={register.sessionId}>
            {register.deviceId}:{' '}
            {register.streams > 0 ? `${register.streams} stream${register.streams > 1 ? 's' : ''}` : 'polling'}, seen{' '}
            {age(register.lastSeenAt, now)}
            {age(register.lastSeenAt, now) === 'just now' ? '' : ' ago'}
          </li>
        ))}
      </ul>
    </section>
  );
}
