/**
 * A register stream's hold on its SERVICE session: the stream lasts while the session is open and
 * the key it was opened with still opens it. The session is judged again whenever it is read
 * (with the replay, after a key rotation, with a re-read after a Redis loss); between reads, one
 * timer ends the stream when the session expires or a rotation retires its key, if that comes
 * before the stream's own timeout.
 */
import { judgeSession, type KeyLimit } from '@pos/shared/auth/session-rules';
import type { SessionDoc } from '@pos/shared/store/documents';
import type { EndReason } from './end-reasons';

export class SessionGuard {
  /** Only for a session that expires (or a key retired) before the stream's timeout. */
  private expiry: NodeJS.Timeout | undefined;
  /** When `expiry` fires (epoch ms). */
  private expiryAt = Infinity;

  constructor(
    /** The key the stream was opened with (its hash); a rotation ends the stream when that key's grace ends. */
    private readonly keyHash: string,
    /** When the stream times out anyway (epoch ms): no timer is set for later. */
    private readonly timesOutAt: number,
    private readonly end: (reason: EndReason) => void,
  ) {}

  /** The session the request was authenticated with: its limit, if any, is armed. */
  start(session: SessionDoc, now: Date): void {
    const verdict = judgeSession(session, this.keyHash, 'SERVICE', now);
    if (verdict.ok) this.endAt(verdict.limit);
  }

  /**
   * Judges the session as just read: true while it holds (its limit armed); else the stream is
   * ended (closed, expired, or its key retired) and false.
   */
  holds(current: SessionDoc | null, now: Date): boolean {
    const verdict = judgeSession(current, this.keyHash, 'SERVICE', now);
    if (verdict.ok) {
      this.endAt(verdict.limit);
      return true;
    }
    if (!current || current.closedAt) this.end('session-closed');
    else this.end(verdict.reason === 'invalid' ? 'key-retired' : 'session-expired');
    return false;
  }

  stop(): void {
    clearTimeout(this.expiry);
    this.expiry = undefined;
  }

  private endAt(limit: KeyLimit | undefined): void {
    if (!limit) return;
    const at = limit.at.getTime();
    if (at >= this.timesOutAt || at >= this.expiryAt) return;
    clearTimeout(this.expiry);
    this.expiryAt = at;
    this.expiry = setTimeout(() => this.end(limit.cause), Math.max(at - Date.now(), 0));
  }
}
