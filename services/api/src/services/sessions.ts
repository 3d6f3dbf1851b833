/**
 * A location's sessions: listed, issued and their keys rotated. A new key is signed under
 * API_KEY_SECRET, shown this once and stored only as its hash; a rotation keeps the old key working
 * for its grace period and tells every node and stream. (Closing one is a transition: transitions.ts.)
 */
import { hashApiKey } from '@pos/shared/auth/keys';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { Announcer } from '@pos/shared/events/announcements';
import type { Logger } from '@pos/shared/log';
import type { IssuedSession, RotatedSession } from '@pos/shared/schemas/responses';
import type { NewSession, SessionDoc } from '@pos/shared/store/documents';
import { type RotatedSessionDoc, type SessionsRepo } from '@pos/shared/store/sessions';
import type { Page } from '@pos/shared/store/page';
import { withTimeout } from '@pos/shared/util/timeout';
import { toSessionView } from '@pos/shared/domain/views';

/** How long a key rotation waits to tell the nodes' streams; the rotation itself is written by then. */
const ROTATION_NOTICE_TIMEOUT_MS = 2_000;

export interface SessionsDeps {
  sessions: Pick<SessionsRepo, 'create' | 'rotateKey' | 'find' | 'listByLocation'>;
  announcer: Pick<Announcer, 'sessionChanged' | 'keyRotated'>;
  /** A new API key, signed under API_KEY_SECRET. */
  newApiKey(): string;
  /** KEY_ROTATION_GRACE: how long a rotated-out key keeps working. */
  keyRotationGraceMs: number;
}

export class Sessions {
  constructor(private readonly deps: SessionsDeps) {}

  find(id: string): Promise<SessionDoc | null> {
    return this.deps.sessions.find(id);
  }

  list(locationId: string, page: Page<string>): Promise<SessionDoc[]> {
    return this.deps.sessions.listByLocation(locationId, page);
  }

  /** A new session with a new key, which the answer shows this once. */
  async issue(session: Omit<NewSession, 'keyHash'>, log: Logger): Promise<IssuedSession> {
    const apiKey = this.deps.newApiKey();
    const doc = await this.deps.sessions.create({ ...session, keyHash: hashApiKey(apiKey) }, new Date());
    log.info({ sessionId: doc._id, type: doc.type, locationId: doc.locationId }, 'session created');
    return { ...toSessionView(doc), apiKey };
  }

  /**
   * A new key for an open session (as just read), which the answer shows this once; the old one
   * works for KEY_ROTATION_GRACE more. A 409 problem for a session that is closed, or that was
   * closed or rotated since it was read.
   */
  async rotate(session: SessionDoc, log: Logger): Promise<RotatedSession> {
    const sessionId = session._id;
    if (session.closedAt) throw new ProblemError(problems.conflict('Session is closed; its key cannot be rotated'));
    const apiKey = this.deps.newApiKey();
    const rotated = await this.deps.sessions.rotateKey(
      session,
      hashApiKey(apiKey),
      new Date(),
      this.deps.keyRotationGraceMs,
    );
    if (!rotated)
      throw new ProblemError(problems.conflict('Session was closed or its key rotated meanwhile; read it again'));
    log.info({ sessionId, previousKeyExpiresAt: rotated.previousKeyExpiresAt }, 'session key rotated');
    await this.tellStreams(rotated, log);
    return {
      ...toSessionView(rotated),
      apiKey,
      keyRotatedAt: rotated.keyRotatedAt.toISOString(),
      previousKeyExpiresAt: rotated.previousKeyExpiresAt.toISOString(),
    };
  }

  /**
   * Nodes drop their cached copy of the session (the old key's grace starts now), and streams
   * opened with the old key end when that grace does. A failure here must not lose the new key.
   */
  private async tellStreams(session: RotatedSessionDoc, log: Logger): Promise<void> {
    try {
      const notices = Promise.all([
        this.deps.announcer.sessionChanged(session._id),
        this.deps.announcer.keyRotated(session.locationId, session._id),
      ]);
      await withTimeout(notices, ROTATION_NOTICE_TIMEOUT_MS, 'Redis PUBLISH');
    } catch (err) {
      // Streams re-read their session after a Redis reconnect, and judge their key then.
      log.warn({ err, sessionId: session._id }, 'could not tell the streams of a key rotation');
    }
  }
}
