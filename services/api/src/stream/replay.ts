import { toCommandRecord, toOrderRecord } from '@pos/shared/domain/records';
import type { CommandsRepo } from '@pos/shared/store/commands';
import type { OrdersRepo } from '@pos/shared/store/orders';
import type { SessionDoc, SessionsRepo } from '@pos/shared/store/sessions';
import type { Cursor } from './cursor';
import { commandEvent, orderEvent, WorkEvent } from './work-event';

export interface Replay {
  /** Orders as read (PLACED above the cursor, and any re-checked), by number. */
  orders: WorkEvent[];
  /** Live commands above the cursor, by number. */
  commands: WorkEvent[];
}

export interface ReplayRepos {
  orders: Pick<OrdersRepo, 'listPlaced' | 'find'>;
  commands: Pick<CommandsRepo, 'listLive'>;
}

/** What a stream reads: its replay, and its session again (a close may have been missed). */
export type StreamRepos = ReplayRepos & { sessions: Pick<SessionsRepo, 'find'> };

/** What the streams of one location that re-read after a Redis reconnect need read. */
export interface ResyncNeeds {
  /** The lowest command cursor among them: live commands above it are read. */
  commandsAbove: number;
  /** Orders any of them announced as PLACED, read whatever their state now. */
  recheck: number[];
  /** Their sessions. */
  sessionIds: string[];
}

/** One read of a location for all its re-reading streams; each takes its own part. */
export interface ResyncRead extends Replay {
  /** The sessions as stored now; null when gone. */
  sessions: Map<string, SessionDoc | null>;
}

/**
 * What a client at `from` has not seen: the work GET /orders/location would list above it.
 * `recheck` names orders to read whatever their state (those a stream announced as PLACED, so
 * that a state change it missed is found).
 */
export async function readReplay(repos: ReplayRepos, locationId: string, from: Cursor, now: Date, recheck: number[] = []): Promise<Replay> {
  const [placed, commands] = await Promise.all([
    repos.orders.listPlaced(locationId, from.orderNumber ?? 0),
    repos.commands.listLive(locationId, now, from.commandNumber ?? 0),
  ]);
  const placedNumbers = new Set(placed.map((doc) => doc.number));
  const others = await Promise.all(recheck.filter((n) => !placedNumbers.has(n)).map((n) => repos.orders.find({ locationId }, n)));
  const orders = [...placed, ...others.filter((doc) => doc !== null)].sort((a, b) => a.number - b.number);
  return {
    orders: orders.map((doc) => orderEvent(toOrderRecord(doc))),
    commands: commands.map((doc) => commandEvent(toCommandRecord(doc))),
  };
}

/**
 * After a Redis reconnect: the location's PLACED orders (whatever the streams' order cursors:
 * they may have missed re-announcements), the orders named in `recheck`, the live commands
 * above the lowest command cursor, and the sessions.
 */
export async function readResync(repos: StreamRepos, locationId: string, needs: ResyncNeeds, now: Date): Promise<ResyncRead> {
  const [replay, sessions] = await Promise.all([
    readReplay(repos, locationId, { orderNumber: 0, commandNumber: needs.commandsAbove }, now, needs.recheck),
    Promise.all(needs.sessionIds.map(async (id) => [id, await repos.sessions.find(id)] as const)),
  ]);
  return { ...replay, sessions: new Map(sessions) };
}

/**
 * The live events buffered while the replay was read, minus what the replay already shows.
 * A command is announced once, at creation: it is covered when the replay holds its number.
 * An order is covered up to the last buffered event identical to its replayed record (that
 * write happened before the read); its later events happened after the read and are sent.
 * Events of orders the replay does not hold (state changes of orders the client knows,
 * orders created after the read) are all sent.
 */
export function unseenBuffered(buffered: WorkEvent[], replay: Replay): WorkEvent[] {
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
