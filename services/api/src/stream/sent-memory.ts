/**
 * What a stream sent of each order lately, to tell a lost event from a repeat: a PUBLISH that
 * ioredis sent again after a reconnect because its reply was lost, a job run again after a crash,
 * or an order that a re-read after a Redis loss finds changed. Oldest first; made on the first
 * order sent.
 */
import type { StreamFrame } from './stream-frame';

interface Sent {
  data: string;
  version?: number;
  /** When it was sent (epoch ms). */
  at: number;
}

export class SentMemory {
  private recent: Map<number, Sent> | undefined;

  /**
   * Whether this order's state, or a later one, was sent since `since` (epoch ms): by version
   * when both are known, else by the record itself.
   */
  has(event: StreamFrame, since: number): boolean {
    const last = this.recent?.get(event.number);
    if (!last || last.at < since) return false;
    if (event.version !== undefined && last.version !== undefined) return event.version <= last.version;
    return last.data === event.data;
  }

  /** Records an order event as sent at `now`, and forgets what was sent before `forgetBefore`. */
  remember(event: StreamFrame, now: number, forgetBefore: number): void {
    const recent = (this.recent ??= new Map());
    recent.delete(event.number);
    recent.set(event.number, { data: event.data, version: event.version, at: now });
    for (const [number, sent] of recent) {
      if (sent.at >= forgetBefore) break;
      recent.delete(number);
    }
  }

  /** Orders remembered. */
  get size(): number {
    return this.recent?.size ?? 0;
  }

  clear(): void {
    this.recent = undefined;
  }
}
