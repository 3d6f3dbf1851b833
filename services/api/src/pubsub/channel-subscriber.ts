import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import type { Logger } from '../../../../shared/src/log';

export type MessageHandler = (message: string) => void;

/**
 * One Redis subscriber connection per API node, shared by every consumer on the node.
 * A channel is subscribed while it has a handler and dropped with its last one.
 * Emits `resubscribed` after Redis comes back: what was published meanwhile is lost, and each
 * consumer recovers it its own way (streams replay from their cursor, job waits re-check jobs).
 */
export class ChannelSubscriber extends EventEmitter {
  private readonly handlers = new Map<string, Set<MessageHandler>>();
  private readyOnce = false;

  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
  ) {
    super();
    redis.on('message', (channel: string, message: string) => this.dispatch(channel, message));
    redis.on('ready', () => {
      if (this.readyOnce) {
        log.warn({ channels: this.handlers.size }, 'redis subscriber reconnected');
        this.emit('resubscribed');
      }
      this.readyOnce = true;
    });
    redis.on('error', (err) => log.warn({ err: err.message }, 'redis subscriber error'));
  }

  async subscribe(channel: string, handler: MessageHandler): Promise<void> {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      set.add(handler);
      await this.redis.subscribe(channel);
      return;
    }
    set.add(handler);
  }

  async unsubscribe(channel: string, handler: MessageHandler): Promise<void> {
    const set = this.handlers.get(channel);
    if (!set || !set.delete(handler) || set.size > 0) return;
    this.handlers.delete(channel);
    await this.redis.unsubscribe(channel);
  }

  /** Channels this node listens to; what the leak tests and /metrics read. */
  get channelCount(): number {
    return this.handlers.size;
  }

  async quit(): Promise<void> {
    this.handlers.clear();
    await this.redis.quit();
  }

  private dispatch(channel: string, message: string): void {
    const set = this.handlers.get(channel);
    if (!set) return;
    for (const handler of [...set]) {
      try {
        handler(message);
      } catch (err) {
        this.log.error({ err, channel }, 'message handler failed');
      }
    }
  }
}
