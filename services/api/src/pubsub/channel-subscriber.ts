import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import type { Logger } from '@pos/shared/log';
import { closeRedis } from '@pos/shared/redis';

export type MessageHandler = (message: string) => void;

/**
 * One Redis subscriber connection per API node, shared by every consumer on the node.
 * A channel is subscribed while it has a handler and dropped with its last one.
 *
 * Emits `resubscribed` (with the epoch ms at which the connection was seen lost) once Redis is
 * back and has confirmed the channels again: what was published meanwhile is lost, and each
 * consumer recovers it its own way (streams re-read what changed since then, job waits re-check
 * their jobs).
 */
export class ChannelSubscriber extends EventEmitter {
  /** Per channel: its handlers, and the SUBSCRIBE every handler waits for. */
  private readonly channels = new Map<string, { handlers: Set<MessageHandler>; subscribed: Promise<unknown> }>();
  private readyOnce = false;
  /** When the connection was seen lost; undefined while it is up. */
  private lostAt: number | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
  ) {
    super();
    redis.on('message', (channel: string, message: string) => this.dispatch(channel, message));
    redis.on('close', () => {
      if (this.readyOnce) this.lostAt ??= Date.now();
    });
    redis.on('ready', () => {
      if (!this.readyOnce) {
        this.readyOnce = true;
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

  /** Channels this node listens to; what the leak tests and /metrics read. */
  get channelCount(): number {
    return this.channels.size;
  }

  async quit(): Promise<void> {
    this.channels.clear();
    await closeRedis(this.redis);
  }

  /** Tells the consumers, once per outage, from when they may have missed messages. */
  private resubscribed(): void {
    const lostAt = this.lostAt;
    if (lostAt === undefined) return;
    this.lostAt = undefined;
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
