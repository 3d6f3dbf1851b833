import type { Logger } from '@pos/shared/log';
import { type Sighting, writeHeartbeat, writeSightings } from '@pos/shared/presence/presence-store';
import type { RedisClient } from '@pos/shared/redis';
import type { SessionDoc } from '@pos/shared/store/documents';

/** How long a write waits for others to join it: a stream's count reaches Redis within it. */
const WRITE_DELAY_MS = 50;

interface Seen {
  locationId: string;
  deviceId: string;
  lastSeenAt: number;
  /** Streams the session holds on this node. */
  streams: number;
  /** When this node last wrote the session's field (epoch ms). */
  writtenAt: number;
}

/**
 * This node's sightings of register (SERVICE) sessions, written behind to Redis
 * (presence-store.ts): a request costs a map look-up, and a Redis write (at once) only when the
 * session's field is older than a quarter of PRESENCE_WINDOW; a stream that opens or ends is
 * written within WRITE_DELAY_MS (it changes the count), with whatever else falls due meanwhile,
 * in one write (a node that registers reconnect to at once writes a few times, not once per
 * stream). Every quarter window the node writes its heartbeat, which keeps the fields of the
 * sessions holding streams counting while nothing else happens: one command, not one per
 * location, so that a node holding thousands of locations' streams stays quiet between requests.
 * A failed write is left to the next one.
 */
export class PresenceTracker {
  private readonly seen = new Map<string, Seen>();
  private readonly timer: NodeJS.Timeout;
  private readonly refreshMs: number;
  /** Sessions due to be written, by location. */
  private due = new Map<string, Set<string>>();
  private flushing: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: { redis: RedisClient; prefix: string; nodeId: string; windowMs: number; log: Logger },
  ) {
    this.refreshMs = Math.max(250, Math.floor(options.windowMs / 4));
    this.timer = setInterval(() => this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  /** A request of a register's session (a poll, a status update, a stream's opening). */
  readonly sighted = (session: SessionDoc, now = Date.now()): void => {
    const entry = this.entryOf(session, now);
    entry.lastSeenAt = now;
    if (now - entry.writtenAt < this.refreshMs) return;
    // at once, before the request is answered: its answer may be followed by a read of the presence
    this.write(entry.locationId, [session._id], now);
    this.flushNow();
  };

  streamOpened(session: SessionDoc, now = Date.now()): void {
    const entry = this.entryOf(session, now);
    entry.streams += 1;
    entry.lastSeenAt = now;
    this.write(entry.locationId, [session._id], now);
  }

  streamClosed(sessionId: string, now = Date.now()): void {
    const entry = this.seen.get(sessionId);
    if (!entry) return;
    entry.streams = Math.max(0, entry.streams - 1);
    entry.lastSeenAt = now;
    this.write(entry.locationId, [sessionId], now);
  }

  /** Stops the refresh; what is due (the counts of the streams a shutdown ended) is written now. */
  stop(): void {
    clearInterval(this.timer);
    this.flushNow();
  }

  private entryOf(session: SessionDoc, now: number): Seen {
    let entry = this.seen.get(session._id);
    if (!entry) {
      entry = {
        locationId: session.locationId,
        deviceId: session.deviceId ?? '',
        lastSeenAt: now,
        streams: 0,
        writtenAt: 0,
      };
      this.seen.set(session._id, entry);
    }
    return entry;
  }

  /**
   * Every quarter window: the heartbeat, with the locations of the sessions holding streams (seen
   * now); sessions gone quiet for a window are forgotten.
   */
  private refresh(now = Date.now()): void {
    const streamLocations = new Set<string>();
    for (const [sessionId, entry] of this.seen) {
      if (entry.streams > 0) {
        entry.lastSeenAt = now;
        streamLocations.add(entry.locationId);
      } else if (entry.lastSeenAt <= now - this.options.windowMs) this.seen.delete(sessionId);
    }
    const { redis, prefix, nodeId, log } = this.options;
    writeHeartbeat(redis, prefix, nodeId, now, [...streamLocations]).catch((err: unknown) =>
      log.warn({ err }, 'could not write the presence heartbeat'),
    );
  }

  private write(locationId: string, sessionIds: string[], now: number): void {
    const due = this.due.get(locationId) ?? new Set<string>();
    for (const sessionId of sessionIds) {
      const entry = this.seen.get(sessionId);
      if (!entry) continue;
      entry.writtenAt = now;
      due.add(sessionId);
    }
    this.due.set(locationId, due);
    this.flushing ??= setTimeout(this.flush, WRITE_DELAY_MS).unref();
  }

  private flushNow(): void {
    if (!this.flushing) return;
    clearTimeout(this.flushing);
    this.flush();
  }

  /** Writes what is due, each session as it stands now. */
  private readonly flush = (): void => {
    this.flushing = undefined;
    const due = this.due;
    this.due = new Map();
    const byLocation = new Map<string, Sighting[]>();
    for (const [locationId, sessionIds] of due) {
      const sightings: Sighting[] = [];
      for (const sessionId of sessionIds) {
        const entry = this.seen.get(sessionId);
        if (entry)
          sightings.push({ sessionId, deviceId: entry.deviceId, lastSeenAt: entry.lastSeenAt, streams: entry.streams });
      }
      byLocation.set(locationId, sightings);
    }
    const { redis, prefix, nodeId, log } = this.options;
    writeSightings(redis, prefix, nodeId, byLocation).catch((err: unknown) => {
      // the next sighting (or the quarter-window refresh) writes it again
      for (const sessionIds of due.values()) {
        for (const sessionId of sessionIds) {
          const entry = this.seen.get(sessionId);
          if (entry) entry.writtenAt = 0;
        }
      }
      log.warn({ err, locations: due.size }, 'could not write register presence');
    });
  };
}
