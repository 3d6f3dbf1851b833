import { isVisibleToRegisters } from '@pos/shared/domain/order-state';
import { toCommandRecord, toOrderRecord } from '@pos/shared/domain/records';
import type { CursorRequest } from '@pos/shared/events/stream-cursor';
import type { ListedOrder, OrdersRepo } from '@pos/shared/store/orders';
import type { SessionDoc } from '@pos/shared/store/documents';
import type { SessionsRepo } from '@pos/shared/store/sessions';
import type { WorkRepo } from '@pos/shared/store/work';
import { commandFrame, orderFrame, StreamFrame } from './stream-frame';

export interface Replay {
  /** Orders to send, by number (the first replay: PLACED above the cursor). */
  orders: StreamFrame[];
  /** Live commands above the cursor, by number. */
  commands: StreamFrame[];
}

/** What streams opening together read: their locations' work, and their sessions again. */
export interface OpeningRepos {
  work: Pick<WorkRepo, 'listForLocations'>;
  sessions: Pick<SessionsRepo, 'findMany'>;
}

/** What one opening stream needs read. */
export interface OpeningRead {
  locationId: string;
  cursor: CursorRequest;
  /** A register's session, read again (a close published before the subscription would be missed). */
  sessionId: string | undefined;
}

/** What an opening stream gets: its replay, and its session as stored now (null: gone; absent for an operator). */
export interface Opening {
  replay: Replay;
  session?: SessionDoc | null;
}

/** What the re-read after a Redis reconnect reads, for many locations at once. */
export interface ResyncRepos {
  work: Pick<WorkRepo, 'listForLocations'>;
  orders: Pick<OrdersRepo, 'listChangedSince'>;
  sessions: Pick<SessionsRepo, 'findMany'>;
}

/** What the streams of one location that re-read after a Redis reconnect need read. */
export interface ResyncNeeds {
  locationId: string;
  /** The lowest order position among them: PLACED orders above it are read. */
  ordersAbove: number;
  /** The lowest command position among them: live commands above it are read. */
  commandsAbove: number;
  /** Orders written from this moment on are read whatever their number: their events may be lost. */
  changedSince: Date;
  /** Their sessions. */
  sessionIds: string[];
}

/** An order written during (or just before) the outage, with the moment of that write. */
export interface ChangedOrder {
  event: StreamFrame;
  /** Epoch ms of the write (the worker's clock). */
  updatedAt: number;
}

/** One read of a location for all its re-reading streams; each takes its own part. */
export interface ResyncRead {
  /** PLACED orders above `ordersAbove`, by number. */
  placed: StreamFrame[];
  /** Orders registers may see, written since `changedSince`, by number. */
  changed: ChangedOrder[];
  /** Live commands above `commandsAbove`, by number. */
  commands: StreamFrame[];
  /** The sessions as stored now; null when gone. */
  sessions: Map<string, SessionDoc | null>;
}

const lowest = (values: number[]) => values.reduce((low, value) => Math.min(low, value), Infinity);

/**
 * What streams opening together have not seen, in two MongoDB commands however many they are:
 * the work of their locations above the lowest cursor among them (one aggregate; each keeps what
 * lies above its own, the work GET /orders/location would list above it), and their sessions (one
 * find by `_id`). A location's records are serialised once for all its streams.
 */
export async function readOpenings(repos: OpeningRepos, reads: readonly OpeningRead[], now: Date): Promise<Opening[]> {
  const sessionIds = [...new Set(reads.flatMap((read) => (read.sessionId === undefined ? [] : [read.sessionId])))];
  const [work, sessions] = await Promise.all([
    repos.work.listForLocations(
      [...new Set(reads.map((read) => read.locationId))],
      now,
      lowest(reads.map((read) => read.cursor.orderNumber ?? 0)),
      lowest(reads.map((read) => read.cursor.commandNumber ?? 0)),
    ),
    repos.sessions.findMany(sessionIds),
  ]);
  const events = new Map<string, Replay>();
  const eventsOf = (locationId: string): Replay => {
    let replay = events.get(locationId);
    if (!replay) {
      const { orders = [], commands = [] } = work.get(locationId) ?? {};
      replay = {
        orders: orders.map((doc) => orderFrame(toOrderRecord(doc), doc)),
        commands: commands.map((doc) => commandFrame(toCommandRecord(doc))),
      };
      events.set(locationId, replay);
    }
    return replay;
  };
  const sessionById = new Map(sessions.map((session) => [session._id, session]));
  return reads.map(({ locationId, cursor, sessionId }) => {
    const { orders, commands } = eventsOf(locationId);
    const replay = {
      orders: above(orders, cursor.orderNumber ?? 0),
      commands: above(commands, cursor.commandNumber ?? 0),
    };
    return sessionId === undefined ? { replay } : { replay, session: sessionById.get(sessionId) ?? null };
  });
}

const above = (events: StreamFrame[], number: number) => events.filter((event) => event.number > number);

/**
 * After a Redis reconnect, for many locations in three MongoDB commands whatever their number:
 * new work above the lowest positions (PLACED orders, live commands; one aggregate), the orders
 * written since their subscriptions may have been lost (state changes, re-announcements; one
 * find), and the sessions (one find by `_id`). Each location gets its own part, by its own
 * positions and moment; every location asked about has an entry.
 */
export async function readResync(
  repos: ResyncRepos,
  needs: ResyncNeeds[],
  now: Date,
): Promise<Map<string, ResyncRead>> {
  const reads = new Map<string, ResyncRead>();
  if (needs.length === 0) return reads;
  const ids = needs.map((need) => need.locationId);
  const sessionIds = [...new Set(needs.flatMap((need) => need.sessionIds))];
  const [work, changed, sessions] = await Promise.all([
    repos.work.listForLocations(
      ids,
      now,
      lowest(needs.map((need) => need.ordersAbove)),
      lowest(needs.map((need) => need.commandsAbove)),
    ),
    repos.orders.listChangedSince(ids, new Date(lowest(needs.map((need) => need.changedSince.getTime())))),
    repos.sessions.findMany(sessionIds),
  ]);
  const changedAt = new Map<string, ListedOrder[]>();
  for (const doc of changed) {
    if (!isVisibleToRegisters(doc.state)) continue;
    const docs = changedAt.get(doc.locationId);
    if (docs) docs.push(doc);
    else changedAt.set(doc.locationId, [doc]);
  }
  const sessionById = new Map(sessions.map((session) => [session._id, session]));
  for (const need of needs) {
    const { orders = [], commands = [] } = work.get(need.locationId) ?? {};
    const since = need.changedSince.getTime();
    reads.set(need.locationId, {
      placed: orders.filter((doc) => doc.number > need.ordersAbove).map((doc) => orderFrame(toOrderRecord(doc), doc)),
      changed: (changedAt.get(need.locationId) ?? [])
        .filter((doc) => doc.updatedAt.getTime() >= since)
        .sort((a, b) => a.number - b.number)
        .map((doc) => ({ event: orderFrame(toOrderRecord(doc), doc), updatedAt: doc.updatedAt.getTime() })),
      commands: commands
        .filter((doc) => doc.number > need.commandsAbove)
        .map((doc) => commandFrame(toCommandRecord(doc))),
      sessions: new Map(need.sessionIds.map((id) => [id, sessionById.get(id) ?? null])),
    });
  }
  return reads;
}

/**
 * The live events buffered while the replay was read, minus what the replay already shows.
 * A command is announced once, at creation: it is covered when the replay holds its number.
 * An order is covered up to the last buffered event identical to its replayed record (that
 * write happened before the read); its later events happened after the read and are sent.
 * Events of orders the replay does not hold (state changes of orders the client knows,
 * orders created after the read) are all sent.
 */
export function unseenBuffered(buffered: StreamFrame[], replay: Replay): StreamFrame[] {
  const replayedCommands = new Set(replay.commands.map((event) => event.number));
  const replayedOrders = new Map(replay.orders.map((event) => [event.number, event.data]));
  const coveredUpTo = new Map<number, number>();
  buffered.forEach((event, index) => {
    if (event.type === 'order' && replayedOrders.get(event.number) === event.data) coveredUpTo.set(event.number, index);
  });
  return buffered.filter((event, index) => {
    if (event.type === 'command') return !replayedCommands.has(event.number);
    const covered = coveredUpTo.get(event.number);
    return covered === undefined || index > covered;
  });
}
