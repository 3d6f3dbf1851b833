import { toCommandRecord, toOrderRecord } from '../../../../shared/src/domain/records';
import type { CommandsRepo } from '../../../../shared/src/store/commands';
import type { OrdersRepo } from '../../../../shared/src/store/orders';
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
