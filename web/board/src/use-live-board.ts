/**
 * The board's live state: the location's work, read when the event stream (re)opens and now and
 * then, kept current by the stream's events in between, and what the live region announces.
 * The rules are board-state.ts's; this hook holds the stream, the clocks and the order in which
 * reads and events are applied.
 */
import type { CommandRecord } from '@pos/shared/domain/records';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { LocationChangeView, LocationView } from '@pos/shared/domain/records';
import type { BoardApi, LocationStatus } from './api';
import {
  applyCommand,
  applyOrder,
  applyRead,
  BoardOrder,
  BoardState,
  emptyBoard,
  expireFinished,
  revealedBy,
} from './board-state';
import { commandArrival, orderArrival } from './format';
import { AuthError } from './http';
import { Connection, LiveStream } from './live-stream';

/** The interface announces neither acknowledgements nor expiry of commands: read again now and then. */
const REREAD_MS = 60_000;
const TICK_MS = 5_000;

type StreamEvent = { type: 'order'; order: BoardOrder } | { type: 'command'; command: CommandRecord };

/** How often an operator's board reads the registers seen (presence changes come as events). */
const PRESENCE_READ_MS = 15_000;

export interface LiveBoard {
  board: BoardState;
  connection: Connection;
  /** What the live region says. */
  announcement: string;
  /** The last few problems, shown until dismissed. */
  problems: string[];
  /** The board's clock (epoch ms), moved on now and then for ages and fading. */
  now: number;
  /** Whether the first read of the work has come back (what was there when the board opened). */
  loaded: boolean;
  /** Operators: the location's presence and pause, and the registers seen (read, then kept by `location` events). */
  status: LocationStatus | undefined;
  /** An answer of a pause or resume, applied at once (its event follows). */
  applyLocation(location: LocationView): void;
  /** An action's answer, applied at once (its event follows) and not announced. */
  applyAnswer(order: BoardOrder): void;
  /** A change the board makes itself (an acknowledged command). */
  change(next: (state: BoardState) => BoardState): void;
  announce(message: string): void;
  /** Signs out on an AuthError; otherwise shows the error's message, after `context` when given. */
  fail(err: unknown, context?: string): void;
  dismissProblems(): void;
  /** Skips the rest of the stream's wait before it reconnects. */
  retryNow(): void;
}

export function useLiveBoard(api: BoardApi, onSignOut: (message?: string) => void): LiveBoard {
  const [board, setBoard] = useState<BoardState>(emptyBoard);
  const [connection, setConnection] = useState<Connection>({ state: 'connecting' });
  const [announcement, setAnnouncement] = useState('');
  const [problems, setProblems] = useState<string[]>([]);
  const [now, setNow] = useState(Date.now());
  const [loaded, setLoaded] = useState(false);
  const [status, setStatus] = useState<LocationStatus | undefined>(undefined);
  const streamRef = useRef<LiveStream | undefined>(undefined);
  // The board's truth, updated in order by reads and events; `board` renders it.
  const state = useRef<BoardState>(emptyBoard);
  const reading = useRef({ generation: 0, inFlight: false, buffered: [] as StreamEvent[], loaded: false });
  const announcing = useRef<string[]>([]);

  const commit = (next: BoardState) => {
    state.current = next;
    setBoard(next);
  };

  /** Messages of one turn (a read and the events it held back) are said together. */
  const announce = (message: string) => {
    const queue = announcing.current;
    queue.push(message);
    if (queue.length === 1) queueMicrotask(() => setAnnouncement(queue.splice(0).join('. ')));
  };

  const fail = (err: unknown, context?: string) => {
    if (err instanceof AuthError) return onSignOut(err.message);
    const message = err instanceof Error ? err.message : String(err);
    setProblems((list) => [...list.slice(-2), context ? `${context}: ${message}` : message]);
  };

  const apply = (event: StreamEvent, announced: boolean) => {
    const before = state.current;
    if (event.type === 'command') {
      commit(applyCommand(before, event.command));
      if (announced && !before.commands.has(event.command.number)) announce(commandArrival(event.command));
      return;
    }
    const { order } = event;
    commit(applyOrder(before, order, Date.now()));
    if (!announced) return;
    if (order.state === 'PLACED' && !before.placed.has(order.number) && !before.final.has(order.number))
      announce(orderArrival(order));
    else if (order.state === 'FAILED' && !before.failed.has(order.number)) announce(orderArrival(order));
  };

  /**
   * Reads the work: when the stream (re)opens, and now and then. Events that arrive meanwhile
   * wait and are applied after the read (they may be newer than it). A newer read first applies
   * what an older one held back, and makes the older one's answer moot. What a read shows first
   * is announced as its events would have been, except by the first read.
   */
  const reread = async (why: 'opened' | 'periodic') => {
    const r = reading.current;
    for (const event of r.buffered.splice(0)) apply(event, r.loaded);
    const generation = ++r.generation;
    r.inFlight = true;
    try {
      const read = await api.readWork();
      if (generation !== r.generation) return;
      const before = state.current;
      const after = applyRead(before, read, why === 'periodic');
      commit(after);
      if (r.loaded) {
        const revealed = revealedBy(before, after);
        for (const order of revealed.orders) announce(orderArrival(order));
        for (const command of revealed.commands) announce(commandArrival(command));
      }
      r.loaded = true;
      setLoaded(true);
      for (const event of r.buffered.splice(0)) apply(event, true);
    } catch (err) {
      if (generation !== r.generation) return;
      fail(err, "Could not read the location's work");
      if (err instanceof AuthError) return;
      for (const event of r.buffered.splice(0)) apply(event, r.loaded);
    } finally {
      if (generation === r.generation) r.inFlight = false;
    }
  };

  const readStatus = () => {
    api.readStatus?.().then(setStatus, (err: unknown) => fail(err, "Could not read the location's presence"));
  };
  const applyLocation = (location: LocationView) => setStatus((current) => current && { ...current, location });

  useEffect(() => {
    const stream = new LiveStream((cursor) => api.stream(cursor), {
      onOpen: () => {
        void reread('opened');
        readStatus();
      },
      onEvent: (type, data) => {
        if (type === 'location') {
          const { location, change } = data as LocationChangeView;
          applyLocation(location);
          announce(`Location ${change}`);
          // who is there changed: read the registers again
          if (change === 'online' || change === 'offline') readStatus();
          return;
        }
        const event: StreamEvent =
          type === 'order' ? { type, order: data as BoardOrder } : { type, command: data as CommandRecord };
        if (reading.current.inFlight) reading.current.buffered.push(event);
        else apply(event, true);
      },
      onConnection: setConnection,
      onRefused: (err) => fail(err),
    });
    streamRef.current = stream;
    stream.start();
    const tick = setInterval(() => {
      setNow(Date.now());
      const expired = expireFinished(state.current, Date.now());
      if (expired !== state.current) commit(expired);
    }, TICK_MS);
    const periodic = setInterval(() => void reread('periodic'), REREAD_MS);
    const presence = api.readStatus ? setInterval(readStatus, PRESENCE_READ_MS) : undefined;
    return () => {
      stream.stop();
      clearInterval(tick);
      clearInterval(periodic);
      clearInterval(presence);
      reading.current.generation += 1;
    };
  }, [api]);

  return {
    board,
    connection,
    announcement,
    problems,
    now,
    loaded,
    status,
    applyLocation,
    applyAnswer: (order) => apply({ type: 'order', order }, false),
    change: (next) => commit(next(state.current)),
    announce,
    fail,
    dismissProblems: () => setProblems([]),
    retryNow: () => streamRef.current?.retryNow(),
  };
}
