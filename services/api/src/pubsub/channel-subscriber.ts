import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import type { Logger } from '@pos/shared/log';
import { closeRedis } from '@pos/shared/redis';

export type MessageHandler = (message: string) => void;

/** How often the connection is checked with a PING. */
export const HEARTBEAT_MS = 1_000;
/**
 * A PING unanswered for this long: the connection is taken for dead (dropped and re-made, and
 * its consumers recover as after any outage). Long enough that a busy Redis or node is not taken
 * for a dead one; the session cache does not wait for it (it needs a PING answered within its
 * own lease).
 */
const HEARTBEAT_TIMEOUT_MS = 10_000;

/**
 * One Redis subscriber connection per API node, shared by every consumer on the node.
 * A channel is subscribed while it has a handler and dropped with its last one.
 *
 * Emits `lost` when the connection is seen lost, and `resubscribed` (with the epoch ms at which
 * it was seen lost) once Redis is back and has confirmed the channels again: what was published
 * meanwhile is lost, and each consumer recovers it its own way (streams re-read what changed
 * since then, job waits re-check their jobs, the session cache drops what it holds).
 *
 * A connection can also die silently (a peer gone without a FIN): nothing is written on a
 * subscriber connection, so nothing would notice. A PING every HEARTBEAT_MS tells: every message
 * published before Redis answered a PING has reached this node, so `confirmedWithin` says how
 * current this node's view of the channels is; a PING left unanswered for HEARTBEAT_TIMEOUT_MS
 * counts as a lost connection (it is dropped and re-made).
 */
export class ChannelSubscriber extends EventEmitter {
  /** Per channel: its handlers, and the SUBSCRIBE every handler waits for. */
  private readonly channels = new Map<string, { handlers: Set<MessageHandler>; subscribed: Promise<unknown> }>();
  private readyOnce = false;
  /** When the connection was seen lost; undefined while it is up. */
  private lostAt: number | undefined;
  /** When the last PING that Redis answered was sent (epoch ms); 0 before the first. */
  private confirmedAt = 0;
  private pingSentAt: number | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
  ) {
    super();
    redis.on('message', (channel: string, message: string) => this.dispatch(channel, message));
    redis.on('close', () => this.lost());
    redis.on('ready', () => {
      if (!this.readyOnce) {
        this.readyOnce = true;
        this.confirmedAt = Date.now();
        return;
      }
      // ioredis re-sends the SUBSCRIBEs right after 'ready'; a PING queued behind them answers
      // once Redis has processed them, so a re-read started then misses nothing published later.
      queueMicrotask(() => {
        this.redis.ping().then(
          () => this.resubscribed(),
          (err: Error) => log.warn({ err: err.message }, 'redis subscriber: no answer after reconnecting'),
        );
      });
    });
    redis.on('error', (err) => log.warn({ err: err.message }, 'redis subscriber error'));
  }

  /** Resolves once Redis has confirmed the channel, for the first handler and every later one. */
  async subscribe(channel: string, handler: MessageHandler): Promise<void> {
    let entry = this.channels.get(channel);
    if (!entry) {
      entry = { handlers: new Set(), subscribed: this.redis.subscribe(channel) };
      this.channels.set(channel, entry);
    }
    entry.handlers.add(handler);
    try {
      await entry.subscribed;
    } catch (err) {
      await this.unsubscribe(channel, handler).catch(() => undefined);
      throw err;
    }
  }

  async unsubscribe(channel: string, handler: MessageHandler): Promise<void> {
    const entry = this.channels.get(channel);
    if (!entry || !entry.handlers.delete(handler) || entry.handlers.size > 0) return;
    this.channels.delete(channel);
    await this.redis.unsubscribe(channel);
  }

  /** True while the connection is up (since its first ready) and not seen lost. */
  get isUp(): boolean {
    return this.readyOnce && this.lostAt === undefined;
  }

  /**
   * True when every message published up to `ms` ago has reached this node: the connection is
   * up and Redis answered a PING sent since then.
   */
  confirmedWithin(ms: number, now = Date.now()): boolean {
    return this.isUp && now - this.confirmedAt < ms;
  }

  /** Starts the PINGs (idempotent); `quit` stops them. */
  startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Channels this node listens to; what the leak tests and /metrics read. */
  get channelCount(): number {
    return this.channels.size;
  }

  async quit(): Promise<void> {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.channels.clear();
    await closeRedis(this.redis);
  }

  private beat(): void {
    if (!this.isUp) return;
    const now = Date.now();
    if (this.pingSentAt !== undefined) {
      if (now - this.pingSentAt < HEARTBEAT_TIMEOUT_MS) return;
      this.log.warn({ waitedMs: now - this.pingSentAt }, 'redis subscriber: no answer to PING; reconnecting');
      this.pingSentAt = undefined;
      this.lost();
      this.redis.disconnect(true);
      return;
    }
    this.pingSentAt = now;
    this.redis.ping().then(
      () => {
        if (this.pingSentAt !== now) return;
        this.pingSentAt = undefined;
        this.confirmedAt = now;
      },
      () => undefined, // the next beat, or the connection's 'close', tells
    );
  }

  /** Once per outage: from now on, messages may be missed until `resubscribed`. */
  private lost(): void {
    if (!this.readyOnce || this.lostAt !== undefined) return;
    this.lostAt = Date.now();
    this.pingSentAt = undefined;
    this.emit('lost', this.lostAt);
  }

  /** Tells the consumers, once per outage, from when they may have missed messages. */
  private resubscribed(): void {
    const lostAt = this.lostAt;
    if (lostAt === undefined) return;
    this.lostAt = undefined;
    this.confirmedAt = Date.now();
    this.log.warn({ channels: this.channels.size, downMs: Date.now() - lostAt }, 'redis subscriber reconnected');
    this.emit('resubscribed', lostAt);
  }

  private dispatch(channel: string, message: string): void {
    const entry = this.channels.get(channel);
    if (!entry) return;
    for (const handler of [...entry.handlers]) {
      try {
        handler(message);
      } catch (err) {
        this.log.error({ err, channel }, 'message handler failed');
      }
    }
  }
}
