import type { StreamsConfig } from '@pos/shared/config';
import { limitReached, ProblemError, problems } from '@pos/shared/domain/problem';
import { locationChannel } from '@pos/shared/events/announcements';
import type { Logger } from '@pos/shared/log';
import { tracing } from '@pos/shared/telemetry/tracing';
import { withTimeout } from '@pos/shared/util/timeout';
import type { OperatorDoc } from '@pos/shared/store/documents';
import type { OperatorsRepo } from '@pos/shared/store/operators';
import type { ApiMetrics } from '../metrics/api-metrics';
import { coversLocation } from '@pos/shared/auth/scope';
import type { ChannelSubscriber, MessageHandler } from '@pos/shared/pubsub/channel-subscriber';
import type { ClientStream } from './client-stream';
import { END_REASONS } from './end-reasons';
import { OpeningReads } from './opening-reads';
import type { ResyncRepos } from './replay';
import { ResyncScheduler } from './resync-scheduler';
import { StreamClock } from './stream-clock';
import { parseAnnouncement, frameOfAnnouncement } from './stream-frame';

export interface StreamHubOptions {
  subscriber: ChannelSubscriber;
  prefix: string;
  metrics: Pick<
    ApiMetrics,
    | 'observeHub'
    | 'eventsReceived'
    | 'eventsDelivered'
    | 'streamsEnded'
    | 'fanOut'
    | 'streamResyncs'
    | 'streamResyncBatches'
  >;
  log: Logger;
  /** What the re-read after a Redis reconnect reads, for many locations at once. */
  repos: ResyncRepos;
  /** The operator accounts, read again after a Redis reconnect for the streams they hold. */
  operators: Pick<OperatorsRepo, 'findMany'>;
  /** How long a new stream waits for its location's subscription before a 503. */
  subscribeTimeoutMs: number;
  /**
   * SSE_MAX_STREAMS: streams this node holds (a new one beyond is refused with a 429), of which
   * operators hold at most SSE_MAX_OPERATOR_STREAMS (the rest is the registers');
   * SSE_MAX_STREAMS_PER_SESSION and SSE_MAX_STREAMS_PER_OPERATOR: streams one register session or
   * one operator account holds on this node (a new one ends its oldest); SSE_KEEPALIVE and
   * SSE_TIMEOUT, kept by one clock for all the node's streams.
   */
  streams: Pick<
    StreamsConfig,
    'maxStreams' | 'maxOperatorStreams' | 'maxStreamsPerSession' | 'maxStreamsPerOperator' | 'keepaliveMs' | 'timeoutMs'
  >;
}

/** Epoch ms with sub-millisecond precision, comparable with the publisher's `at`. */
const epochNow = () => performance.timeOrigin + performance.now();

/** A node at SSE_MAX_STREAMS suggests this wait; a load balancer may send the retry elsewhere. */
const FULL_NODE_RETRY_AFTER_S = 5;

/** Whose streams count together: a register session's, or an operator account's (`ADMIN_TOKEN`'s as `root`). */
const sessionHolder = (sessionId: string) => `session:${sessionId}`;
const operatorHolder = (operatorId: string) => `operator:${operatorId}`;
const holderOf = (stream: ClientStream): string =>
  stream.sessionId !== undefined ? sessionHolder(stream.sessionId) : operatorHolder(stream.operatorId ?? 'root');
const OPERATOR_HOLDER = /^operator:(.+)$/;

/** One location's channel on this node, and the streams that listen to it. */
interface LocationFeed {
  locationId: string;
  channel: string;
  streams: Set<ClientStream>;
  handler: MessageHandler;
  subscribed: Promise<void>;
}

/**
 * The event streams open on this node, grouped by location. A location's channel is
 * subscribed while at least one of its streams is open, and each message is forwarded to them.
 */
export class StreamHub {
  /** Keepalives and timeouts of every stream on this node: two timers in all. */
  readonly clock: StreamClock;
  /** The first reads of the streams opening on this node, shared by those that open together. */
  readonly openings: OpeningReads;
  private readonly feeds = new Map<string, LocationFeed>();
  private readonly feedOf = new Map<ClientStream, LocationFeed>();
  /**
   * Each holder's streams on this node, oldest first (holderOf): a session's are ended when it
   * closes, an operator account's when it changes.
   */
  private readonly ofHolder = new Map<string, Set<ClientStream>>();
  /** Operators' streams on this node, against SSE_MAX_OPERATOR_STREAMS. */
  private operatorStreams = 0;
  private readonly unsubscribing = new Set<Promise<void>>();
  private accepting = true;
  /** Reads the locations again after a Redis reconnect, in batches. */
  private readonly resync: ResyncScheduler;
  /**
   * What is published while the subscriber is away is lost to this node: every stream remembers
   * what it sent from then on, and no re-read starts until the subscriptions are back.
   */
  private readonly onLost = (lostAt: number) => {
    this.resync.pause();
    for (const stream of this.feedOf.keys()) stream.noteLoss(lostAt);
  };
  /**
   * The subscriptions are back: every stream holds its live events until
   * its location is read again (once per location).
   */
  private readonly onResubscribed = (lostAt: number) => {
    for (const feed of this.feeds.values()) for (const stream of feed.streams) stream.holdForResync(lostAt);
    this.resync.resume(this.feeds.keys());
    void this.recheckOperators();
  };

  constructor(private readonly options: StreamHubOptions) {
    this.clock = new StreamClock(options.streams.keepaliveMs, options.streams.timeoutMs);
    this.openings = new OpeningReads(options.repos);
    this.resync = new ResyncScheduler({
      repos: options.repos,
      streamsOf: (locationId) => this.feeds.get(locationId)?.streams ?? [],
      metrics: options.metrics,
      log: options.log,
    });
    options.subscriber.on('lost', this.onLost);
    options.subscriber.on('resubscribed', this.onResubscribed);
    options.metrics.observeHub(this);
    // Every reason from the start: "no stream dropped for being slow" reads as a 0, not a missing series.
    for (const reason of END_REASONS) options.metrics.streamsEnded.inc({ reason }, 0);
  }

  get openStreams(): number {
    return this.feedOf.size;
  }

  get locationCount(): number {
    return this.feeds.size;
  }

  /**
   * Adds a stream and resolves once its location's channel is subscribed: from then on every
   * event of the location reaches the stream. On failure, or when the subscription is not in place
   * within `waitMs` (the request's time left; `subscribeTimeoutMs` by default), the stream is ended
   * and a problem thrown.
   */
  async add(stream: ClientStream, waitMs = this.options.subscribeTimeoutMs): Promise<void> {
    if (!this.accepting) throw new ProblemError(problems.unavailable('The node is shutting down'));
    const { maxStreams, maxOperatorStreams, maxStreamsPerSession, maxStreamsPerOperator } = this.options.streams;
    const operator = stream.audience === 'operator';
    const holder = holderOf(stream);
    const own = this.ofHolder.get(holder) ?? new Set<ClientStream>();
    const perHolder = operator ? maxStreamsPerOperator : maxStreamsPerSession;
    // One that replaces a stream of its holder adds none to the node.
    if (own.size < perHolder) {
      if (this.feedOf.size >= maxStreams)
        throw limitReached(`This node holds its limit of ${maxStreams} event streams`, FULL_NODE_RETRY_AFTER_S);
      if (operator && this.operatorStreams >= maxOperatorStreams) {
        throw limitReached(
          `This node holds its limit of ${maxOperatorStreams} operator streams; the rest is kept for registers`,
          FULL_NODE_RETRY_AFTER_S,
        );
      }
    }
    this.ofHolder.set(holder, own.add(stream));
    if (operator) this.operatorStreams += 1;
    const feed = this.feeds.get(stream.locationId) ?? this.openFeed(stream.locationId);
    feed.streams.add(stream);
    this.feedOf.set(stream, feed);
    // A register or board that reconnects may not know its old stream is gone (nor may this node
    // yet): the newest stream of a holder wins, so a client is never locked out by its own
    // leftovers. (Ended after the new one joined the feed, so that the location stays subscribed.)
    for (const oldest of own) {
      if (own.size <= perHolder) break;
      oldest.end('replaced');
      own.delete(oldest);
    }
    try {
      await withTimeout(feed.subscribed, Math.max(0, waitMs), 'Redis SUBSCRIBE');
    } catch (err) {
      this.options.log.warn({ err, channel: feed.channel }, 'could not subscribe to the location');
      stream.end('failed');
      throw new ProblemError(problems.unavailable('Redis did not answer in time'));
    }
  }

  /**
   * Called by the stream when it ends; the last stream of a location drops
   * the subscription. (One function for all streams.)
   */
  readonly remove = (stream: ClientStream): void => {
    const holder = holderOf(stream);
    const own = this.ofHolder.get(holder);
    if (own?.delete(stream) && own.size === 0) this.ofHolder.delete(holder);
    const feed = this.feedOf.get(stream);
    if (!feed) return;
    this.feedOf.delete(stream);
    if (stream.audience === 'operator') this.operatorStreams -= 1;
    feed.streams.delete(stream);
    if (feed.streams.size > 0) return;
    if (this.feeds.get(feed.locationId) === feed) this.feeds.delete(feed.locationId);
    const done = this.options.subscriber
      .unsubscribe(feed.channel, feed.handler)
      .catch((err: unknown) => this.options.log.warn({ err, channel: feed.channel }, 'could not unsubscribe'))
      .finally(() => this.unsubscribing.delete(done));
    this.unsubscribing.add(done);
  };

  /**
   * An operator account changed (deleted, token rotated, role or locations): its streams end, as a
   * closed session's do; one whose operator may still read the location reconnects with its cursor.
   */
  readonly operatorChanged = (operatorId: string): void => {
    for (const stream of [...(this.ofHolder.get(operatorHolder(operatorId)) ?? [])]) stream.end('operator-changed');
  };

  /**
   * An operator's change published while the subscriptions were down never reached this node: the
   * accounts holding streams here are read again (one read), and a stream its account no longer
   * allows ends as a change would have ended it: the account deleted, its token rotated since the
   * stream opened, or its locations no longer covering the stream's. If the read fails, they all
   * end (their reconnection authenticates again).
   */
  private async recheckOperators(): Promise<void> {
    const ids = [...this.ofHolder.keys()]
      .flatMap((holder) => OPERATOR_HOLDER.exec(holder)?.[1] ?? [])
      .filter((id) => id !== 'root');
    if (ids.length === 0) return;
    let current: Map<string, OperatorDoc> | undefined;
    try {
      current = new Map((await this.options.operators.findMany(ids)).map((doc) => [doc._id, doc]));
    } catch (err) {
      this.options.log.warn({ err }, 'could not read the operators of open streams again: ending their streams');
    }
    for (const id of ids) {
      const doc = current?.get(id);
      for (const stream of [...(this.ofHolder.get(operatorHolder(id)) ?? [])]) {
        const allowed =
          doc !== undefined &&
          !(doc.tokenRotatedAt && doc.tokenRotatedAt.getTime() >= stream.joinedAt) &&
          coversLocation(doc, stream.locationId);
        if (!allowed) stream.end('operator-changed');
      }
    }
  }

  /**
   * Called by a stream that waits for its location's re-read (one that was
   * reading its first replay when Redis was lost).
   */
  readonly requestResync = (stream: ClientStream): void => {
    this.resync.request(stream.locationId);
  };

  /** Shutdown: refuses new streams, ends the open ones and waits for the unsubscriptions. */
  async close(): Promise<void> {
    this.accepting = false;
    this.resync.close();
    for (const stream of [...this.feedOf.keys()]) stream.end('shutdown');
    await Promise.all([...this.unsubscribing]);
    this.options.subscriber.off('lost', this.onLost);
    this.options.subscriber.off('resubscribed', this.onResubscribed);
  }

  private openFeed(locationId: string): LocationFeed {
    const channel = locationChannel(this.options.prefix, locationId);
    const feed: LocationFeed = {
      locationId,
      channel,
      streams: new Set(),
      handler: (message) => this.dispatch(feed, message),
      subscribed: Promise.resolve(),
    };
    feed.subscribed = this.options.subscriber.subscribe(channel, feed.handler);
    feed.subscribed.catch(() => undefined); // each waiting stream sees the failure itself
    this.feeds.set(locationId, feed);
    return feed;
  }

  /**
   * A location event, to every stream of the location. For an event sent to streams, the time
   * from its publication (the publisher's clock) to the last write here is the node's fan-out
   * time (`pos_fanout_seconds`).
   */
  private dispatch(feed: LocationFeed, message: string): void {
    const event = parseAnnouncement(message);
    if (!event) {
      this.options.log.warn({ channel: feed.channel }, 'unreadable location event');
      return;
    }
    this.options.metrics.eventsReceived.inc({ type: event.type });
    if (event.type === 'session-closed') {
      for (const stream of [...(this.ofHolder.get(sessionHolder(event.sessionId)) ?? [])]) stream.end('session-closed');
      return;
    }
    if (event.type === 'key-rotated') {
      for (const stream of this.ofHolder.get(sessionHolder(event.sessionId)) ?? []) stream.keyRotated();
      return;
    }
    const work = frameOfAnnouncement(event);
    if (!work) return;
    const span = tracing()?.startSpan(
      'fan-out',
      { 'pos.location_id': feed.locationId, 'pos.event.type': work.type },
      { root: true },
    );
    let written = 0;
    // A stream that ends while being written to leaves the set; iterating a Set survives that.
    for (const stream of feed.streams) if (stream.deliver(work)) written += 1;
    span?.end({ 'pos.streams': written });
    if (written === 0) return;
    this.options.metrics.eventsDelivered.inc({ type: work.type }, written);
    if (event.at !== undefined) this.options.metrics.fanOut.observe(Math.max(0, epochNow() - event.at) / 1000);
  }
}
