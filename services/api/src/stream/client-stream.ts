import type { ServerResponse } from 'node:http';
import type { StreamsConfig } from '@pos/shared/config';
import { CursorRequest, formatEventId, startOf, StreamCursor } from '@pos/shared/events/stream-cursor';
import { flattenBindings } from '@pos/shared/internals/pino-bindings';
import type { Logger } from '@pos/shared/log';
import type { SessionDoc } from '@pos/shared/store/documents';
import type { SessionsRepo } from '@pos/shared/store/sessions';
import { fullJitter } from '@pos/shared/util/jitter';
import type { ApiMetrics } from '../metrics/api-metrics';
import type { EndReason } from './end-reasons';
import type { OpeningReads } from './opening-reads';
import { Replay, ResyncRead, unseenBuffered } from './replay';
import { ResyncState } from './resync-state';
import { SentMemory } from './sent-memory';
import { SessionGuard } from './session-guard';
import type { SseWriter } from './sse-writer';
import type { ClockedStream, StreamClock } from './stream-clock';
import { openStreamResponse } from './stream-response';
import { Audience, encodeFrame, StreamFrame } from './stream-frame';

/**
 * The reconnection delay the stream suggests to clients (`retry:`), in milliseconds: the documented
 * base, of which each stream sends a random part (full jitter), so that the streams a node ends
 * together (at shutdown) are not reconnected together.
 */
export const RETRY_MS = 1000;

/**
 * After a Redis outage, orders written from this long before the node saw the connection lost
 * are re-read: a worker stamps `updatedAt` before its write and publishes after it, and a dying
 * connection may be noticed late.
 */
export const RESYNC_MARGIN_MS = 5_000;
/**
 * How long a stream remembers what it sent of an order, to tell a lost event from a repeat: the
 * margin, and room for the hosts' clocks to differ (NTP keeps them within milliseconds). After a
 * Redis loss it remembers from this long before the loss until its re-read is in, however long
 * that takes.
 */
const RECENT_WINDOW_MS = RESYNC_MARGIN_MS + 2_000;

/**
 * Who holds the stream. A register, by its SERVICE session: the session is read again with every
 * replay and must stay valid, and the stream ends when it is closed or expires. An operator, by
 * its token (checked when the stream opened; it has no session): an operator account's stream
 * ends when the account changes (deleted, its token rotated, its role or locations changed).
 */
export type StreamReader =
  /** `keyHash`: the key the stream was opened with; a rotation ends the stream when that key's grace ends. */
  | { kind: 'register'; session: SessionDoc; keyHash: string }
  | { kind: 'operator'; locationId: string; operatorId?: string };

export interface ClientStreamOptions {
  reader: StreamReader;
  cursor: CursorRequest;
  res: ServerResponse;
  /** Its first replay and its session, read with those of the streams opening with it. */
  openings: Pick<OpeningReads, 'read'>;
  /** Its session, read again after a key rotation. */
  sessions: Pick<SessionsRepo, 'find'>;
  /** SSE_MAX_BUFFER. */
  streams: Pick<StreamsConfig, 'maxBufferBytes'>;
  /** The node's keepalive interval and SSE_TIMEOUT, jittered per stream (the hub's). */
  clock: StreamClock;
  metrics: Pick<ApiMetrics, 'eventsDelivered' | 'streamsEnded'>;
  log: Logger;
  /** The request's id, which the head carries (X-Request-Id). */
  requestId: string;
  /** Called once when the stream ends, for whatever reason. */
  onEnd(stream: ClientStream): void;
  /** Called when the stream waits for its location's re-read after a Redis loss (the hub's scheduler reads it). */
  onResyncNeeded(stream: ClientStream): void;
}

/** A stream's part in its location's re-read: its position, and since when it may have missed writes. */
export interface ResyncPart {
  orderNumber: number;
  commandNumber: number;
  /** Epoch ms: orders written from then on are read. */
  changedSince: number;
  sessionId: string | undefined;
}

/**
 * One open stream of a location: a register's, or an operator's (whose orders carry their
 * failure count; see stream-frame.ts). It is `syncing` while its first replay is read, `held`
 * after a Redis loss until its location's re-read is in (live events are buffered in both),
 * `live` once the replay or re-read and the buffered events it does not cover are sent.
 * The position (highest order and command numbers announced) is every event's id. Its parts:
 * the session guard (a register's), the re-read state, the memory of what it sent, the writer.
 */
export class ClientStream implements ClockedStream {
  /** The register's session; absent on an operator's stream. */
  readonly sessionId: string | undefined;
  /** The operator account holding it; absent on a register's stream and on ADMIN_TOKEN's. */
  readonly operatorId: string | undefined;
  readonly locationId: string;
  readonly audience: Audience;
  /** Resolves with the reason when the stream has ended. */
  readonly done: Promise<EndReason>;

  private phase: 'syncing' | 'live' | 'held' | 'ended' = 'syncing';
  private buffer: StreamFrame[] = [];
  private readonly position: StreamCursor;
  private writer: SseWriter | undefined;
  /** A register's: its session's hold on the stream. */
  private readonly guard: SessionGuard | undefined;
  private readonly resync = new ResyncState();
  private readonly sent = new SentMemory();
  /** The order number the client said it had seen; what lies at or below it came before this stream. */
  private readonly knownUpTo: number;
  /** When the location's subscription was in place (epoch ms): events from then on reach this stream. */
  private subscribedAt = Date.now();
  private delivered = 0;
  readonly joinedAt = Date.now();
  /** When the node's clock ends the stream (its SSE_TIMEOUT, jittered), epoch ms. */
  private readonly timesOutAt: number;
  private resolveDone!: (reason: EndReason) => void;
  /**
   * Callbacks a stream holds for its whole life are bound methods, not arrows: under tsx (how
   * `npm run start:api` and the bench run) a named arrow is given its name by a property
   * definition, which costs each stream a few hundred bytes more per callback (held by
   * test/unit/library-internals.test.ts).
   */
  private readonly onClose = this.end.bind(this, 'client-gone');

  constructor(private readonly options: ClientStreamOptions) {
    const { reader } = options;
    this.sessionId = reader.kind === 'register' ? reader.session._id : undefined;
    this.operatorId = reader.kind === 'operator' ? reader.operatorId : undefined;
    this.locationId = reader.kind === 'register' ? reader.session.locationId : reader.locationId;
    this.audience = reader.kind;
    this.position = startOf(options.cursor);
    this.knownUpTo = this.position.orderNumber;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));

    options.res.once('close', this.onClose);
    this.timesOutAt = options.clock.join(this);
    if (reader.kind === 'register') {
      // a session that expires, or a key retired by a rotation, before SSE_TIMEOUT ends the stream then
      this.guard = new SessionGuard(reader.keyHash, this.timesOutAt, this.end.bind(this));
      this.guard.start(reader.session, new Date());
    }
  }

  /** The node's clock: every keepalive interval. */
  keepalive(): void {
    this.writer?.tick();
  }

  /** The node's clock: its timeout is over. */
  timeout(): void {
    this.end('timeout');
  }

  get isEnded(): boolean {
    return this.phase === 'ended';
  }

  /**
   * Reads what the client has not seen; call it once the location's channel is subscribed, so
   * that whatever happens from then on is either in the replay or buffered. A register's session
   * is read again too: a close or key rotation published before the subscription would otherwise be missed.
   */
  async prepare(now = new Date()): Promise<Replay> {
    this.subscribedAt = now.getTime();
    const { replay, session } = await this.options.openings.read({
      locationId: this.locationId,
      cursor: this.options.cursor,
      sessionId: this.sessionId,
    });
    if (session !== undefined) this.guard?.holds(session, now);
    return replay;
  }

  /** Writes the head and the `retry:` preamble, then the replay; live from then on. */
  attach(replay: Replay): void {
    // the stream's logger lives as long as it does
    flattenBindings(this.options.log);
    this.writer = openStreamResponse(this.options.res, this.options.requestId, {
      keepaliveMs: this.options.clock.keepaliveMs,
      maxBufferBytes: this.options.streams.maxBufferBytes,
      onOverflow: this.end.bind(this, 'slow-client'),
    });
    if (!this.writer) {
      this.end('client-gone');
      return;
    }
    this.writer.retry(fullJitter(RETRY_MS));
    if (this.phase === 'ended') {
      // Ended while the replay was read (session closed, timeout): an empty stream, then its end.
      this.writer.end();
      return;
    }
    this.options.log.info(
      {
        reader: this.audience,
        cursor: formatEventId(this.position),
        replay: replay.orders.length + replay.commands.length,
      },
      'stream opened',
    );
    this.goLive(replay);
  }

  /**
   * The session's key was rotated (a location event): reads the session again and, if this
   * stream's key is the one replaced, ends it when the key's grace ends, like the key's requests.
   */
  keyRotated(): void {
    if (this.phase === 'ended' || this.sessionId === undefined) return;
    this.options.sessions.find(this.sessionId).then(
      (current) => {
        if (this.phase !== 'ended') this.guard?.holds(current, new Date());
      },
      (err: unknown) => {
        // Cannot tell whether this stream's key is the old one: end it; the reconnection is judged afresh.
        this.options.log.warn({ err }, 'session could not be read after a key rotation');
        this.end('resync-failed');
      },
    );
  }

  /**
   * A live event of the location (the hub calls this for every stream of the location); true
   * when it was written to the client now.
   */
  deliver(event: StreamFrame): boolean {
    if (event.operatorOnly && this.audience !== 'operator') return false;
    if (this.phase === 'live') return this.send(event);
    if (this.phase !== 'ended') this.buffer.push(event);
    return false;
  }

  /**
   * The node saw its Redis subscriptions lost at `lostAt` (epoch ms): what is published from
   * shortly before then may never reach this stream. From now on it remembers what it sends
   * until a re-read covers the loss.
   */
  noteLoss(lostAt: number): void {
    if (this.phase !== 'ended') this.resync.noteLoss(lostAt);
  }

  /**
   * The subscriptions are back after a loss at `lostAt`: a live stream buffers its live events
   * from now on and waits for its location's re-read (the hub's scheduler); a stream still
   * reading its first replay waits once that is sent; one already waiting covers this loss too,
   * or, if its read is in flight, waits for another.
   */
  holdForResync(lostAt: number): void {
    this.noteLoss(lostAt);
    if (this.phase !== 'live') return;
    this.phase = 'held';
    this.buffer = [];
  }

  /** True while the stream waits for its location's re-read and none of its is in flight. */
  get awaitsResync(): boolean {
    return this.phase === 'held' && this.resync.awaitsRead;
  }

  /** Its location's read begins (the scheduler's batch): what this stream needs read. */
  beginResync(): ResyncPart {
    const lossAt = this.resync.begin(Date.now());
    return {
      orderNumber: this.position.orderNumber,
      commandNumber: this.position.commandNumber,
      changedSince: lossAt - RESYNC_MARGIN_MS,
      sessionId: this.sessionId,
    };
  }

  /**
   * Its location's read is in: ends the stream if its session no longer holds, else sends what
   * it may have missed (see `missedOrders`) and the buffered events, and goes live.
   */
  takeResync(shared: ResyncRead, now: Date): void {
    const lossAt = this.resync.take();
    if (this.phase !== 'held' || lossAt === undefined) return;
    if (this.guard && !this.guard.holds(shared.sessions.get(this.sessionId!) ?? null, now)) return;
    const replay: Replay = {
      orders: this.missedOrders(shared, lossAt),
      commands: shared.commands.filter((event) => event.number > this.position.commandNumber),
    };
    this.options.log.debug(
      { orders: replay.orders.length, commands: replay.commands.length },
      'stream re-read after redis reconnect',
    );
    this.goLive(replay);
  }

  /**
   * Its location's read failed: it waits for the next one (the scheduler reads the location
   * again), or ends after RESYNC_ATTEMPTS; the client then reconnects with its cursor.
   */
  resyncFailed(): void {
    if (this.resync.failed() !== 'give-up' || this.phase !== 'held') return;
    this.options.log.warn('stream could not be re-read after redis reconnect');
    this.end('resync-failed');
  }

  end(reason: EndReason): void {
    if (this.phase === 'ended') return;
    this.phase = 'ended';
    this.buffer = [];
    this.sent.clear();
    this.resync.clear();
    this.options.clock.leave(this);
    this.guard?.stop();
    this.options.res.off('close', this.onClose);
    if (reason === 'client-gone' || reason === 'slow-client') this.writer?.destroy();
    else {
      // a node going away: a fresh delay for each stream, so that they do not all come back at once
      if (reason === 'shutdown') this.writer?.retry(fullJitter(RETRY_MS));
      this.writer?.end();
    }
    this.options.onEnd(this);
    this.options.metrics.streamsEnded.inc({ reason });
    const line = {
      reason,
      delivered: this.delivered,
      cursor: formatEventId(this.position),
      ms: Date.now() - this.joinedAt,
    };
    if (reason === 'slow-client' || reason === 'resync-failed') this.options.log.warn(line, 'stream ended');
    else this.options.log.info(line, 'stream ended');
    this.resolveDone(reason);
  }

  /** Sends the replay and the buffered events it does not cover. */
  private goLive(replay: Replay): void {
    const pending = unseenBuffered(this.buffer, replay);
    this.buffer = [];
    this.phase = 'live';
    this.writer?.burst(() => {
      for (const event of [...replay.orders, ...replay.commands, ...pending]) {
        if (this.phase !== 'live') return;
        this.send(event, false);
      }
    });
    // A loss seen while this was read: what it covers may be incomplete, so the location is read (again).
    if (this.phase !== 'live' || !this.resync.uncovered) return;
    this.phase = 'held';
    this.options.onResyncNeeded(this);
  }

  /**
   * This stream's part of the orders re-read after a loss at `lossAt`, by number: new work above
   * its position, and the orders at or below it written since RESYNC_MARGIN_MS before the loss in
   * a form this stream has not sent. Its memory of what it sent reaches further back than that
   * margin (RECENT_WINDOW_MS before the loss, kept until this read), so an order it announced is
   * never announced again, while what it never sent still comes: a state change, a re-announcement
   * (failure report, recovery), or a customer's order numbered below the position and submitted
   * meanwhile. Of the orders the client knew before this stream opened, only writes after the
   * stream's subscription count: older ones came before it (the client had them, or polls).
   */
  private missedOrders(shared: ResyncRead, lossAt: number): StreamFrame[] {
    const since = lossAt - RESYNC_MARGIN_MS;
    const remembered = lossAt - RECENT_WINDOW_MS;
    const fresh = shared.placed.filter((event) => event.number > this.position.orderNumber);
    const changed = shared.changed
      .filter(({ event, updatedAt }) => {
        if (event.number > this.position.orderNumber) return false; // new work is in `fresh`, PLACED or not at all
        if (updatedAt < since || this.alreadySent(event, remembered)) return false; // (read for another stream's earlier loss)
        return event.number > this.knownUpTo || updatedAt >= this.subscribedAt;
      })
      .map(({ event }) => event);
    return [...changed, ...fresh];
  }

  /** Writes the event; true when it was written. Live events are counted by the hub, the rest here. */
  private send(event: StreamFrame, counted = true): boolean {
    if (event.type === 'order') {
      // Sent in this very form, or a later one, moments ago: not news (a PUBLISH that ioredis sent
      // again after a reconnect because its reply was lost, a job run again after a crash).
      if (this.alreadySent(event)) return false;
      this.position.orderNumber = Math.max(this.position.orderNumber, event.number);
      this.remember(event);
    } else if (event.type === 'command')
      this.position.commandNumber = Math.max(this.position.commandNumber, event.number);
    if (!this.writer?.frame(encodeFrame(event, formatEventId(this.position), this.audience))) return false;
    this.delivered += 1;
    if (!counted) this.options.metrics.eventsDelivered.inc({ type: event.type });
    return true;
  }

  /** Whether this order's state, or a later one, was sent since `since` (by default, within the window). */
  private alreadySent(event: StreamFrame, since = Date.now() - RECENT_WINDOW_MS): boolean {
    return this.sent.has(event, since);
  }

  /**
   * Records an order event as sent; what is older than the window (before a loss
   * still to be re-read, the window before it) is forgotten.
   */
  private remember(event: StreamFrame): void {
    const now = Date.now();
    this.sent.remember(event, now, this.resync.rememberFrom(now) - RECENT_WINDOW_MS);
  }
}
