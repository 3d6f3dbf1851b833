import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import type { Logger } from '../log';
import { closeRedis, whenReady } from '../redis';
import { withTimeout } from '../util/timeout';
import { pause } from '../util/pause';
import { SINGLE_REDIS_NODE, SubscriberNodes } from './subscriber-nodes';
import { doubling } from '../util/doubling-pause';

export type MessageHandler = (message: string) => void;

/** How long restoring waits for a node to connect and confirm, per attempt. */
const CONFIRM_TIMEOUT_MS = 1_000;
/** How often each subscriber connection is checked with a PING. */
export const HEARTBEAT_MS = 1_000;
/**
 * A PING unanswered for this long: the connection is taken for dead (dropped and re-made, and
 * its consumers recover as after any outage). Long enough that a busy Redis or node is not taken
 * for a dead one; the session cache does not wait for it (it needs a PING answered within its
 * own lease).
 */
const HEARTBEAT_TIMEOUT_MS = 10_000;
/** Restoring tries again after 100 ms, doubling up to this. */
const RESTORE_BACKOFF_CAP_MS = 1_000;

interface Channel {
  handlers: Set<MessageHandler>;
  /** The first (S)SUBSCRIBE; every handler waits for it. */
  subscribed: Promise<void>;
  /** The node holding the subscription, once placed. */
  node?: string;
}

/** An SSUBSCRIBE answered MOVED: the slot map used to place it is out of date. */
class MovedError extends Error {}

/**
 * A process's subscriptions (an API node's, a worker's), shared by every consumer in it: a
 * channel is subscribed while it has a handler and dropped with its last one. One design for both modes: a
 * subscriber connection per node holding channels (on one Redis, the one connection with
 * SUBSCRIBE; on a cluster, one per master with SSUBSCRIBE, each channel on its slot's master).
 *
 * A connection that drops has lost its subscriptions and whatever was published meanwhile. The
 * subscriber then restores every subscription (on a cluster, after re-reading the slot map, so
 * channels of a failed master move to the replica that took over), waits for Redis to confirm
 * them all, and only then emits `resubscribed`, with the epoch ms at which the loss was seen: each
 * consumer recovers what it missed its own way (streams re-read what changed since shortly before
 * then, job waits look at their jobs). A slot that moved while the
 * connections stayed up (resharding) is noticed by the periodic slot map check and handled alike.
 * It emits `lost` (with the same epoch ms) when the loss is first seen: from then on messages may
 * be missed (the session cache drops what it holds).
 *
 * A connection can also die silently (a peer gone without a FIN): nothing is written on a
 * subscriber connection, so nothing would notice. A PING every HEARTBEAT_MS on each connection
 * tells: every message published before Redis answered a PING has reached this node, so
 * `confirmedWithin` says how current this node's view of its channels is; a PING left unanswered
 * for HEARTBEAT_TIMEOUT_MS counts as a lost connection (it is dropped and re-made).
 */
export class ChannelSubscriber extends EventEmitter {
  private readonly channels = new Map<string, Channel>();
  private readonly connections = new Map<string, Redis>();
  private restoring: Promise<void> | undefined;
  private lostAgain = false;
  /** When the subscriptions were seen lost; undefined while they hold. */
  private lostAt: number | undefined;
  private readonly closing = new AbortController();
  /** Per connection: when its last answered PING was sent, and the PING awaiting an answer. */
  private readonly beats = new Map<Redis, { confirmedAt: number; pingSentAt?: number }>();
  /**
   * Per connection, the confirmations in flight that a MOVED answer fails:
   * one `moved` listener however many there are.
   */
  private readonly movedWaiters = new WeakMap<Redis, Set<(err: Error) => void>>();
  /** Per connection still connecting, the one wait for it that every channel placed meanwhile shares. */
  private readonly readiness = new WeakMap<Redis, Promise<void>>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly nodes: SubscriberNodes,
    private readonly log: Logger,
  ) {
    super();
    nodes.watch(() => {
      // A restore places every channel by the map it read itself.
      if (this.restoring) return;
      const moved = [...this.channels].some(
        ([channel, entry]) => entry.node !== undefined && nodes.nodeOf(channel) !== entry.node,
      );
      if (moved) this.recover('the slot of a subscribed channel moved');
    });
  }

  /** Resolves once Redis has confirmed the channel, for the first handler and every later one. */
  async subscribe(channel: string, handler: MessageHandler): Promise<void> {
    let entry = this.channels.get(channel);
    if (!entry) {
      const created: Channel = { handlers: new Set(), subscribed: Promise.resolve() };
      created.subscribed = this.place(channel, created);
      this.channels.set(channel, created);
      entry = created;
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
    const connection = entry.node === undefined ? undefined : this.connections.get(entry.node);
    // A connection that is down has forgotten its subscriptions already (it never resubscribes by itself).
    if (connection?.status === 'ready') await this.command(connection, 'unsubscribe', channel);
    this.dropIdleConnections();
  }

  /** Channels this node listens to; what the leak tests and /metrics read. */
  get channelCount(): number {
    return this.channels.size;
  }

  /** True while no loss is being recovered from. */
  get isUp(): boolean {
    return this.lostAt === undefined && this.restoring === undefined && !this.closing.signal.aborted;
  }

  /**
   * True when every message published up to `ms` ago has reached this node: no loss is being
   * recovered from, and each connection holding channels answered a PING sent since then.
   */
  confirmedWithin(ms: number, now = Date.now()): boolean {
    if (!this.isUp) return false;
    for (const connection of this.connections.values()) {
      if (now - (this.beats.get(connection)?.confirmedAt ?? 0) >= ms) return false;
    }
    return true;
  }

  /** Starts the PINGs (idempotent); `quit` stops them. */
  startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** The subscriber connection of a single Redis (the reconnect tests cut it); undefined on a cluster. */
  get redis(): Redis | undefined {
    return this.connections.get(SINGLE_REDIS_NODE);
  }

  /** False from a lost connection until every subscription is confirmed again. */
  get allSubscribed(): boolean {
    return this.restoring === undefined;
  }

  async quit(): Promise<void> {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.closing.abort();
    this.nodes.close();
    this.channels.clear();
    const connections = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(connections.map((connection) => closeRedis(connection)));
  }

  /** Subscribes a new channel where it lives, once its node's connection is up. */
  private async place(channel: string, entry: Channel): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (this.nodes.nodeOf(channel) === undefined) await this.nodes.refresh();
      const node = this.nodes.nodeOf(channel);
      if (node === undefined) throw new Error(`no Redis node serves ${channel}`);
      entry.node = node;
      const connection = this.connection(node);
      await this.ready(connection);
      // Given up meanwhile (a stream's deadline): subscribing now would leak the subscription.
      if (this.channels.get(channel) !== entry) return;
      try {
        await this.confirm(connection, [channel]);
        return;
      } catch (err) {
        if (!(err instanceof MovedError) || attempt === 3) throw err;
        await this.nodes.refresh();
      }
    }
  }

  private connection(node: string): Redis {
    const existing = this.connections.get(node);
    if (existing) return existing;
    const connection = this.nodes.connect(node);
    connection.on(this.nodes.commands.message, (channel: string, message: string) => this.dispatch(channel, message));
    connection.on('error', (err: Error) => this.log.warn({ err: err.message, node }, 'redis subscriber error'));
    connection.on('ready', () => this.beats.set(connection, { confirmedAt: Date.now() }));
    const movedWaiters = new Set<(err: Error) => void>();
    this.movedWaiters.set(connection, movedWaiters);
    connection.on('moved', () => {
      for (const fail of movedWaiters) fail(new MovedError('SSUBSCRIBE answered MOVED'));
    });
    connection.on('close', () => {
      this.beats.delete(connection);
      if (this.connections.get(node) !== connection) return; // dropped on purpose
      if ([...this.channels.values()].some((entry) => entry.node === node))
        this.recover(`the connection to ${node} closed`);
    });
    this.connections.set(node, connection);
    return connection;
  }

  /**
   * Resolves once the connection is up: a burst of channels placed while it
   * connects waits on one pair of listeners, not a pair each.
   */
  private ready(connection: Redis): Promise<void> {
    if (connection.status === 'ready') return Promise.resolve();
    let pending = this.readiness.get(connection);
    if (!pending) {
      pending = whenReady(connection).finally(() => this.readiness.delete(connection));
      this.readiness.set(connection, pending);
    }
    return pending;
  }

  /** (S)SUBSCRIBE, one command per channel (a cluster refuses channels of several slots in one). */
  private async confirm(connection: Redis, channels: string[]): Promise<void> {
    // ioredis does not reject an SSUBSCRIBE answered MOVED: it emits `moved` and leaves it pending.
    const waiters = this.movedWaiters.get(connection)!;
    let fail: (err: Error) => void = () => undefined;
    const moved = new Promise<never>((_, reject) => (fail = reject));
    waiters.add(fail);
    try {
      await Promise.race([
        Promise.all(channels.map((channel) => this.command(connection, 'subscribe', channel))),
        moved,
      ]);
    } finally {
      waiters.delete(fail);
    }
  }

  private command(connection: Redis, kind: 'subscribe' | 'unsubscribe', channel: string): Promise<unknown> {
    switch (this.nodes.commands[kind]) {
      case 'subscribe':
        return connection.subscribe(channel);
      case 'ssubscribe':
        return connection.ssubscribe(channel);
      case 'unsubscribe':
        return connection.unsubscribe(channel);
      case 'sunsubscribe':
        return connection.sunsubscribe(channel);
    }
  }

  /** Starts restoring, or makes the running restore go round once more. */
  private recover(reason: string): void {
    if (this.closing.signal.aborted || this.channels.size === 0) return;
    if (this.lostAt === undefined) {
      this.lostAt = Date.now();
      this.emit('lost', this.lostAt);
    }
    this.lostAgain = true;
    if (this.restoring) return;
    this.log.warn({ reason, channels: this.channels.size }, 'redis subscriptions lost; restoring them');
    this.restoring = this.restore().finally(() => (this.restoring = undefined));
  }

  private async restore(): Promise<void> {
    for (let attempt = 0; this.lostAgain && !this.closing.signal.aborted; attempt++) {
      if (attempt > 0) await pause(doubling(attempt, [100, RESTORE_BACKOFF_CAP_MS]), this.closing.signal);
      this.lostAgain = false;
      try {
        await this.resubscribeAll();
      } catch (err) {
        this.lostAgain = true;
        if (attempt % 10 === 0)
          this.log.warn({ err: (err as Error).message, attempt }, 'redis subscriptions not restored yet');
        continue;
      }
      if (!this.lostAgain && !this.closing.signal.aborted) {
        const lostAt = this.lostAt ?? Date.now();
        this.lostAt = undefined;
        this.log.warn({ channels: this.channels.size, downMs: Date.now() - lostAt }, 'redis subscriptions restored');
        this.emit('resubscribed', lostAt);
      }
    }
  }

  /** Every channel on the node that serves it now, confirmed; connections left unused are closed. */
  private async resubscribeAll(): Promise<void> {
    await this.nodes.refresh();
    const byNode = new Map<string, string[]>();
    for (const [channel, entry] of this.channels) {
      const node = this.nodes.nodeOf(channel);
      if (node === undefined) throw new Error(`no Redis node serves ${channel}`);
      entry.node = node;
      const onNode = byNode.get(node);
      if (onNode) onNode.push(channel);
      else byNode.set(node, [channel]);
    }
    this.dropIdleConnections();
    await Promise.all(
      [...byNode].map(async ([node, channels]) => {
        const connection = this.connection(node);
        await whenReady(connection, CONFIRM_TIMEOUT_MS);
        await withTimeout(this.confirm(connection, channels), CONFIRM_TIMEOUT_MS, `SUBSCRIBE on ${node}`);
      }),
    );
  }

  /**
   * One heartbeat: a PING on each connection, unless one is still awaited
   * (then, past its timeout, the connection is re-made).
   */
  private beat(): void {
    if (!this.isUp) return;
    const now = Date.now();
    for (const [node, connection] of this.connections) {
      const beat = this.beats.get(connection);
      if (!beat || connection.status !== 'ready') continue;
      if (beat.pingSentAt !== undefined) {
        if (now - beat.pingSentAt < HEARTBEAT_TIMEOUT_MS) continue;
        this.log.warn({ node, waitedMs: now - beat.pingSentAt }, 'redis subscriber: no answer to PING; reconnecting');
        beat.pingSentAt = undefined;
        this.recover(`no answer to PING from ${node}`);
        connection.disconnect(true);
        continue;
      }
      beat.pingSentAt = now;
      connection.ping().then(
        () => {
          if (beat.pingSentAt !== now) return;
          beat.pingSentAt = undefined;
          beat.confirmedAt = now;
        },
        () => undefined, // the next beat, or the connection's 'close', tells
      );
    }
  }

  /** Closes connections to nodes that hold none of the channels (a failed master, an emptied node). */
  private dropIdleConnections(): void {
    const used = new Set([...this.channels.values()].map((entry) => entry.node));
    for (const [node, connection] of this.connections) {
      if (used.has(node)) continue;
      this.connections.delete(node);
      connection.disconnect();
    }
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
