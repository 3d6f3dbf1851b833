import type { ServerResponse } from 'node:http';
import { judgeSession } from '../../../../shared/src/auth/session-rules';
import type { Config } from '../../../../shared/src/config';
import type { Logger } from '../../../../shared/src/log';
import type { SessionDoc, SessionsRepo } from '../../../../shared/src/store/sessions';
import type { ApiMetrics } from '../metrics/api-metrics';
import { Cursor, formatPosition, startPosition, StreamPosition } from './cursor';
import { readReplay, Replay, ReplayRepos, unseenBuffered } from './replay';
import { SseWriter } from './sse-writer';
import type { WorkEvent } from './work-event';

/** The reconnection delay the stream suggests to clients (`retry:`), in milliseconds. */
export const RETRY_MS = 1000;

/** setTimeout's largest delay; longer ones would fire at once. */
const MAX_DELAY_MS = 2_147_483_647;

export type EndReason =
  | 'client-gone'
  | 'timeout'
  | 'session-closed'
  | 'session-expired'
  | 'slow-client'
  | 'shutdown'
  | 'resync-failed'
  | 'failed';

export interface ClientStreamOptions {
  session: SessionDoc;
  cursor: Cursor;
  res: ServerResponse;
  repos: ReplayRepos & { sessions: Pick<SessionsRepo, 'find'> };
  config: Pick<Config, 'sseKeepaliveMs' | 'sseTimeoutMs' | 'sseMaxBufferBytes'>;
  metrics: Pick<ApiMetrics, 'eventsDelivered'>;
  log: Logger;
  /** Called once when the stream ends, for whatever reason. */
  onEnd(stream: ClientStream): void;
}

/**
 * One register's open stream. It is `syncing` while a replay is read (live events are buffered
 * meanwhile), `live` once the replay and the buffered events it does not cover are sent.
 * The position (highest order and command numbers announced) is every event's id.
 */
export class ClientStream {
  readonly sessionId: string;
  readonly locationId: string;
  /** Resolves with the reason when the stream has ended. */
  readonly done: Promise<EndReason>;

  private phase: 'syncing' | 'live' | 'ended' = 'syncing';
  private buffer: WorkEvent[] = [];
  private readonly position: StreamPosition;
  private writer: SseWriter | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private resyncWanted = false;
  /** Orders whose last event on this stream said PLACED, with that event's data. */
  private readonly placedSent = new Map<number, string>();
  private delivered = 0;
  private readonly openedAt = Date.now();
  private resolveDone!: (reason: EndReason) => void;
  private readonly onClose = () => this.end('client-gone');

  constructor(private readonly options: ClientStreamOptions) {
    this.sessionId = options.session._id;
    this.locationId = options.session.locationId;
    this.position = startPosition(options.cursor);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));

    options.res.once('close', this.onClose);
    this.after(options.config.sseTimeoutMs, 'timeout');
    const expiresAt = options.session.expiresAt;
    if (expiresAt && expiresAt.getTime() - Date.now() < options.config.sseTimeoutMs) {
      this.after(expiresAt.getTime() - Date.now(), 'session-expired');
    }
  }

  get isEnded(): boolean {
    return this.phase === 'ended';
  }

  /**
   * Reads what the client has not seen; call it once the location's channel is subscribed, so
   * that whatever happens from then on is either in the replay or buffered. The session is
   * read again too: a close published before the subscription would otherwise be missed.
   */
  async prepare(now = new Date()): Promise<Replay> {
    const { repos, session, cursor } = this.options;
    const [replay, current] = await Promise.all([readReplay(repos, this.locationId, cursor, now), repos.sessions.find(session._id)]);
    const verdict = judgeSession(current, 'SERVICE', new Date());
    if (!verdict.ok) this.end(current && !current.closedAt ? 'session-expired' : 'session-closed');
    return replay;
  }

  /** Writes the head and the `retry:` preamble, then the replay; live from then on. */
  attach(replay: Replay): void {
    const { res, config } = this.options;
    if (res.destroyed || !res.socket || res.socket.destroyed) {
      // gone before its stream was ready, perhaps before its 'close' could be listened to
      this.end('client-gone');
      return;
    }
    res.shouldKeepAlive = false; // a finished stream closes its connection: nothing waits on it at shutdown
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    this.writer = new SseWriter(res, {
      keepaliveMs: config.sseKeepaliveMs,
      maxBufferBytes: config.sseMaxBufferBytes,
      onOverflow: () => this.end('slow-client'),
    });
    this.writer.start(RETRY_MS);
    if (this.phase === 'ended') {
      // Ended while the replay was read (session closed, timeout): an empty stream, then its end.
      this.writer.end();
      return;
    }
    this.options.log.info({ cursor: formatPosition(this.position), replay: replay.orders.length + replay.commands.length }, 'stream opened');
    this.goLive(replay);
  }

  /** A live event of the location (the hub calls this for every stream of the location). */
  deliver(event: WorkEvent): void {
    if (this.phase === 'live') this.send(event);
    else if (this.phase === 'syncing') this.buffer.push(event);
  }

  /**
   * After a Redis reconnect, whatever was published meanwhile is lost, so the stream is read
   * again: live commands above its position; the location's PLACED orders, sent unless this
   * stream already announced them exactly so (new work, re-announcements); and the current
   * state of every order this stream announced as PLACED that has left PLACED meanwhile.
   */
  resync(): void {
    if (this.phase === 'syncing') {
      this.resyncWanted = true;
      return;
    }
    if (this.phase !== 'live') return;
    this.phase = 'syncing';
    this.buffer = [];
    const { repos, log } = this.options;
    const from = { orderNumber: 0, commandNumber: this.position.commandNumber };
    readReplay(repos, this.locationId, from, new Date(), [...this.placedSent.keys()]).then(
      (replay) => {
        if (this.phase !== 'syncing') return;
        const orders = replay.orders.filter((event) => this.placedSent.get(event.number) !== event.data);
        log.info({ orders: orders.length, commands: replay.commands.length }, 'stream re-read after redis reconnect');
        this.goLive(replay, orders);
      },
      (err: unknown) => {
        // The client reconnects with its cursor and gets the replay then.
        log.warn({ err }, 'stream could not be re-read after redis reconnect');
        this.end('resync-failed');
      },
    );
  }

  end(reason: EndReason): void {
    if (this.phase === 'ended') return;
    this.phase = 'ended';
    this.buffer = [];
    this.placedSent.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.length = 0;
    this.options.res.off('close', this.onClose);
    if (reason === 'client-gone' || reason === 'slow-client') this.writer?.destroy();
    else this.writer?.end();
    this.options.onEnd(this);
    const line = { reason, delivered: this.delivered, cursor: formatPosition(this.position), ms: Date.now() - this.openedAt };
    if (reason === 'slow-client' || reason === 'resync-failed') this.options.log.warn(line, 'stream ended');
    else this.options.log.info(line, 'stream ended');
    this.resolveDone(reason);
  }

  /** Sends the replay (or the part of its orders given) and the buffered events it does not cover. */
  private goLive(replay: Replay, orders = replay.orders): void {
    const pending = unseenBuffered(this.buffer, replay);
    this.buffer = [];
    this.phase = 'live';
    this.writer?.burst(() => {
      for (const event of [...orders, ...replay.commands, ...pending]) {
        if (this.phase !== 'live') return;
        this.send(event);
      }
    });
    if (this.phase !== 'live') return;
    if (this.resyncWanted) {
      this.resyncWanted = false;
      this.resync();
    }
  }

  private send(event: WorkEvent): void {
    if (event.type === 'order') {
      this.position.orderNumber = Math.max(this.position.orderNumber, event.number);
      if (event.state === 'PLACED') this.placedSent.set(event.number, event.data);
      else this.placedSent.delete(event.number);
    } else this.position.commandNumber = Math.max(this.position.commandNumber, event.number);
    if (this.writer?.event(event.type, formatPosition(this.position), event.data)) {
      this.delivered += 1;
      this.options.metrics.eventsDelivered.inc({ type: event.type });
    }
  }

  private after(ms: number, reason: EndReason): void {
    this.timers.push(setTimeout(() => this.end(reason), Math.min(Math.max(ms, 0), MAX_DELAY_MS)));
  }
}
