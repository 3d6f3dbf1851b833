/**
 * What the board shows, and how reads and events change it. Pure: no DOM, no requests, no
 * clock of its own (callers pass `now`), so the rules are plain to read and to test.
 *
 * - A read (the work list after every (re)connection, and now and then) is the truth at its
 *   moment: it replaces the open work it covers. Events that arrived while it was in flight are
 *   applied after it, in order, so whatever happened after the read wins.
 * - COMPLETED and ABORTED are final: once the board knows an order reached one, no older event
 *   or read brings it back.
 * - New work is announced whichever way it arrives first, event or read (revealedBy), except on
 *   the board's first read: what was there when it opened is not news.
 */
import type { CommandRecord, OrderRecord } from '@pos/shared/domain/records';

/** An order as the board holds it: operators' reads and streams add its failure count and overdue mark. */
export type BoardOrder = OrderRecord & { failureCount?: number; overdue?: boolean };

export interface FinishedOrder {
  order: BoardOrder;
  /** When the board learnt it finished (epoch ms): it fades out from then. */
  seenAt: number;
}

export interface BoardState {
  /** PLACED orders by number. */
  placed: ReadonlyMap<number, BoardOrder>;
  /** FAILED orders by number (waiting for an operator). */
  failed: ReadonlyMap<number, BoardOrder>;
  /** Live commands by number. */
  commands: ReadonlyMap<number, CommandRecord>;
  /** Orders seen reaching COMPLETED or ABORTED, newest first. */
  finished: readonly FinishedOrder[];
  /** Numbers known to be COMPLETED or ABORTED (the last few hundred). */
  final: ReadonlySet<number>;
}

/** What one read of the location returns. */
export interface WorkRead {
  placed: BoardOrder[];
  /** Operators read FAILED orders; a kitchen's register interface cannot (docs/board.md). */
  failed?: BoardOrder[];
  commands: CommandRecord[];
}

/** How long a finished order stays on the board, fading. */
export const FINISHED_VISIBLE_MS = 3 * 60_000;
/** At most this many finished orders are shown. */
export const FINISHED_SHOWN = 10;
const FINAL_REMEMBERED = 500;

export const emptyBoard: BoardState = {
  placed: new Map(),
  failed: new Map(),
  commands: new Map(),
  finished: [],
  final: new Set(),
};

const byNumber = <T extends { number: number }>(items: T[]) => new Map(items.map((item) => [item.number, item]));

function without<T>(map: ReadonlyMap<number, T>, number: number): ReadonlyMap<number, T> {
  if (!map.has(number)) return map;
  const copy = new Map(map);
  copy.delete(number);
  return copy;
}

function withEntry<T>(map: ReadonlyMap<number, T>, number: number, value: T): ReadonlyMap<number, T> {
  return new Map(map).set(number, value);
}

/**
 * An order record as it arrived (event, read or an action's answer). An answer to an action
 * carries no failure count: the one known is kept while the state is the same.
 */
export function applyOrder(state: BoardState, incoming: BoardOrder, now: number): BoardState {
  const { number } = incoming;
  if (state.final.has(number)) return state;
  const known = state.placed.get(number) ?? state.failed.get(number);
  const order: BoardOrder =
    incoming.failureCount === undefined && known?.failureCount !== undefined && known.state === incoming.state
      ? { ...incoming, failureCount: known.failureCount }
      : incoming;
  const placed = without(state.placed, number);
  const failed = without(state.failed, number);
  switch (order.state) {
    case 'PLACED':
      return { ...state, placed: withEntry(placed, number, order), failed };
    case 'FAILED':
      return { ...state, placed, failed: withEntry(failed, number, order) };
    case 'COMPLETED':
    case 'ABORTED': {
      const finished = [{ order, seenAt: now }, ...state.finished.filter((f) => f.order.number !== number)].slice(
        0,
        FINISHED_SHOWN,
      );
      const final = new Set([...state.final, number]);
      if (final.size > FINAL_REMEMBERED) final.delete(final.values().next().value!);
      return { ...state, placed, failed, finished, final };
    }
    default:
      // SELECTING and NEW never reach registers or the board
      return state;
  }
}

export function applyCommand(state: BoardState, command: CommandRecord): BoardState {
  return { ...state, commands: withEntry(state.commands, command.number, command) };
}

export function removeCommand(state: BoardState, number: number): BoardState {
  return { ...state, commands: without(state.commands, number) };
}

/**
 * A read replaces the open work: orders no longer listed left it meanwhile and go; final orders
 * stay final. Finished orders stay until they fade. A kitchen's read has no FAILED orders (the
 * register interface lists only PLACED ones): those the board saw fail are kept while its stream
 * stayed connected (`streamUnbroken`: every later change reached it), and dropped after a
 * reconnection, when what happened to them meanwhile is unknown.
 */
export function applyRead(state: BoardState, read: WorkRead, streamUnbroken = false): BoardState {
  const open = (orders: BoardOrder[]) => byNumber(orders.filter((order) => !state.final.has(order.number)));
  const placed = open(read.placed);
  const failed =
    read.failed ?? (streamUnbroken ? [...state.failed.values()].filter((order) => !placed.has(order.number)) : []);
  return { ...state, placed, failed: open(failed), commands: byNumber(read.commands) };
}

/**
 * What a read showed that the board did not: orders newly PLACED (not final) or newly FAILED,
 * and new commands, by number. The board announces them as it announces events (not on its
 * first read): work that first reaches it through a read is already shown when its event follows.
 */
export function revealedBy(before: BoardState, after: BoardState): { orders: BoardOrder[]; commands: CommandRecord[] } {
  const placed = sorted(after.placed).filter(
    (order) => !before.placed.has(order.number) && !before.final.has(order.number),
  );
  const failed = sorted(after.failed).filter((order) => !before.failed.has(order.number));
  return {
    orders: [...placed, ...failed],
    commands: sorted(after.commands).filter((command) => !before.commands.has(command.number)),
  };
}

/** Drops finished orders that have faded out. */
export function expireFinished(state: BoardState, now: number): BoardState {
  const finished = state.finished.filter((f) => now - f.seenAt < FINISHED_VISIBLE_MS);
  return finished.length === state.finished.length ? state : { ...state, finished };
}

/** Sorted for display: oldest first (by number, which follows creation). */
export const sorted = <T extends { number: number }>(map: ReadonlyMap<number, T>): T[] =>
  [...map.values()].sort((a, b) => a.number - b.number);
