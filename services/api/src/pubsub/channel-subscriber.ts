import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import type { Logger } from '@pos/shared/log';
import { closeRedis } from '@pos/shared/redis';

export type MessageHandler = (message: string) => void;

/**
 * One Redis subscriber connection per API node, shared by every consumer on the node.
 * A channel is subscribed while it has a handler and dropped with its last one.
 * Emits `resubscribed` after Redis comes back: what was published meanwhile is lost, and each
 * consumer recovers it its own way (streams replay from their cursor, job waits re-check jobs).
 */
export class ChannelSubscriber extends EventEmitter {
  /** Per channel: its handlers, and the SUBSCRIBE every handler waits for. */
  private readonly channels = new Map<string, { handlers: Set<MessageHandler>; subscribed: Promise<unknown> }>();
  private readyOnce = false;

  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
  ) {
    super();
    redis.on('message', (channel: string, message: string) => this.dispatch(channel, message));
    redis.on('ready', () => {
      if (this.readyOnce) {
        log.warn({ channels: this.channels.size }, 'redis subscriber reconnected');
        this.emit('resubscribed');
      }
      this.readyOnce = true;
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
