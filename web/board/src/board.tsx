/**
 * The signed-in board: the location's open orders, failed orders, live commands and the last
 * finished orders, kept current by the event stream and re-read after every (re)connection.
 */
import type { CommandRecord } from '@pos/shared/domain/records';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { BoardApi } from './api';
import {
  applyCommand,
  applyOrder,
  applyRead,
  BoardOrder,
  BoardState,
  emptyBoard,
  expireFinished,
  FinishedOrder,
  removeCommand,
  sorted,
} from './board-state';
import { age, clock, commandLabel, tableLabel, urgency } from './format';
import { AuthError } from './http';
import { Connection, LiveStream } from './live-stream';

/** The interface announces neither acknowledgements nor expiry of commands: read again now and then. */
const REREAD_MS = 60_000;
const TICK_MS = 5_000;
const CONFIRM_MS = 4_000;

type StreamEvent = { type: 'order'; order: BoardOrder } | { type: 'command'; command: CommandRecord };

export interface BoardProps {
  api: BoardApi;
  title: string;
  onSignOut(message?: string): void;
}

export function Board({ api, title, onSignOut }: BoardProps) {
  const [board, setBoard] = useState<BoardState>(emptyBoard);
  const [connection, setConnection] = useState<Connection>({ state: 'connecting' });
  const [announcement, setAnnouncement] = useState('');
  const [problems, setProblems] = useState<string[]>([]);
  const [now, setNow] = useState(Date.now());
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set());
  const [confirming, setConfirming] = useState<number | undefined>(undefined);
  const streamRef = useRef<LiveStream | undefined>(undefined);
  // The board's truth, updated in order by reads and events; `board` renders it.
  const state = useRef<BoardState>(emptyBoard);
  const reading = useRef({ generation: 0, inFlight: false, buffered: [] as StreamEvent[] });

  const commit = (next: BoardState) => {
    state.current = next;
    setBoard(next);
  };
  const report = (message: string) => setProblems((list) => [...list.slice(-2), message]);
  const signOutOn = (err: unknown) => {
    if (err instanceof AuthError) onSignOut(err.message);
    return err instanceof AuthError;
  };

  const apply = (event: StreamEvent, announce: boolean) => {
    const before = state.current;
    if (event.type === 'command') {
      commit(applyCommand(before, event.command));
      if (announce && !before.commands.has(event.command.number)) {
        setAnnouncement(`${commandLabel(event.command)}, ${tableLabel(event.command.tableNumber)}`);
      }
      return;
    }
    const { order } = event;
    commit(applyOrder(before, order, Date.now()));
    if (announce && order.state === 'PLACED' && !before.placed.has(order.number) && !before.final.has(order.number)) {
      setAnnouncement(`New order ${order.number}, ${tableLabel(order.tableNumber)}`);
    } else if (announce && order.state === 'FAILED' && !before.failed.has(order.number)) {
      setAnnouncement(`Order ${order.number} failed`);
    }
  };

  /**
   * Reads the work: when the stream (re)opens, and now and then. Events that arrive meanwhile
   * wait and are applied after the read (they may be newer than it). A newer read first applies
   * what an older one held back, and makes the older one's answer moot.
   */
  const reread = async (why: 'opened' | 'periodic') => {
    const r = reading.current;
    for (const event of r.buffered.splice(0)) apply(event, false);
    const generation = ++r.generation;
    r.inFlight = true;
    try {
      const read = await api.readWork();
      if (generation !== r.generation) return;
      commit(applyRead(state.current, read, why === 'periodic'));
      for (const event of r.buffered.splice(0)) apply(event, true);
    } catch (err) {
      if (generation !== r.generation || signOutOn(err)) return;
      report(`Could not read the location's work: ${(err as Error).message}`);
      for (const event of r.buffered.splice(0)) apply(event, true);
    } finally {
      if (generation === r.generation) r.inFlight = false;
    }
  };

  useEffect(() => {
    const stream = new LiveStream((cursor) => api.stream(cursor), {
      onOpen: () => void reread('opened'),
      onEvent: (type, data) => {
        const event: StreamEvent = type === 'order' ? { type, order: data as BoardOrder } : { type, command: data as CommandRecord };
        if (reading.current.inFlight) reading.current.buffered.push(event);
        else apply(event, true);
      },
      onConnection: setConnection,
      onRefused: (err) => {
        if (!signOutOn(err)) report(err.message);
      },
    });
    streamRef.current = stream;
    stream.start();
    const tick = setInterval(() => {
      setNow(Date.now());
      const expired = expireFinished(state.current, Date.now());
      if (expired !== state.current) commit(expired);
    }, TICK_MS);
    const periodic = setInterval(() => void reread('periodic'), REREAD_MS);
    return () => {
      stream.stop();
      clearInterval(tick);
      clearInterval(periodic);
      reading.current.generation += 1;
    };
  }, [api]);

  useEffect(() => {
    document.title = title === 'Location board' ? title : `${title} · Location board`;
  }, [title]);

  /** Runs one action at a time per button; its answer is applied at once (the event follows). */
  const act = async (key: string, action: () => Promise<void>) => {
    if (busy.has(key)) return;
    setBusy((set) => new Set(set).add(key));
    try {
      await action();
    } catch (err) {
      if (!signOutOn(err)) report((err as Error).message);
    } finally {
      setBusy((set) => {
        const next = new Set(set);
        next.delete(key);
        return next;
      });
    }
  };

  const finish = (order: BoardOrder, newState: 'COMPLETED' | 'ABORTED') =>
    act(`order-${order.number}`, async () => {
      setConfirming(undefined);
      const answer = await api.setStatus(order.number, newState);
      apply({ type: 'order', order: answer }, false);
      setAnnouncement(`Order ${order.number} ${newState === 'COMPLETED' ? 'completed' : 'aborted'}`);
    });

  const abort = (order: BoardOrder) => {
    if (confirming !== order.number) {
      setConfirming(order.number);
      setTimeout(() => setConfirming((n) => (n === order.number ? undefined : n)), CONFIRM_MS);
      return;
    }
    void finish(order, 'ABORTED');
  };

  const recover = (order: BoardOrder) =>
    act(`order-${order.number}`, async () => {
      const answer = await api.recover!(order.number);
      apply({ type: 'order', order: answer }, false);
      setAnnouncement(`Order ${order.number} recovered`);
    });

  const acknowledge = (command: CommandRecord) =>
    act(`command-${command.number}`, async () => {
      try {
        await api.acknowledge(command.number);
      } catch (err) {
        // acknowledged elsewhere meanwhile (or expired): it is gone all the same
        if (!(err instanceof Error && /does not exist/.test(err.message))) throw err;
      }
      commit(removeCommand(state.current, command.number));
      setAnnouncement(`Command ${command.number} acknowledged`);
    });

  const placed = sorted(board.placed);
  const failed = sorted(board.failed);
  const commands = sorted(board.commands);
  const operator = api.mode === 'operator';

  return (
    <div class="board">
      <header class="topbar">
        <h1>
          {title} <span class="mode">{operator ? 'Operator' : 'Kitchen'}</span>
        </h1>
        <ConnectionBadge connection={connection} onRetry={() => streamRef.current?.retryNow()} />
        <button type="button" class="quiet" onClick={() => onSignOut()}>
          Sign out
        </button>
      </header>
      <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true">
        {announcement}
      </div>
      {problems.length > 0 && (
        <div class="problems" role="alert">
          {problems.map((problem, i) => (
            <p key={i}>{problem}</p>
          ))}
          <button type="button" class="quiet" onClick={() => setProblems([])}>
            Dismiss
          </button>
        </div>
      )}
      <main class="columns">
        <section class="orders" aria-labelledby="orders-heading">
          <div class="section-head">
            <h2 id="orders-heading">Orders</h2>
            <span class="count">{placed.length} open</span>
          </div>
          {placed.length === 0 ? (
            <p class="empty">No open orders.</p>
          ) : (
            <ul class="cards" role="list">
              {placed.map((order) => (
                <li key={order.number}>
                  <OrderCard order={order} now={now} operator={operator}>
                    <button
                      type="button"
                      class="primary"
                      aria-label={`Complete order ${order.number}`}
                      disabled={busy.has(`order-${order.number}`)}
                      onClick={() => void finish(order, 'COMPLETED')}
                    >
                      Complete
                    </button>
                    <button
                      type="button"
                      class={confirming === order.number ? 'danger confirming' : 'danger'}
                      aria-label={confirming === order.number ? `Confirm abort of order ${order.number}` : `Abort order ${order.number}`}
                      disabled={busy.has(`order-${order.number}`)}
                      onClick={() => abort(order)}
                    >
                      {confirming === order.number ? 'Confirm abort' : 'Abort'}
                    </button>
                  </OrderCard>
                </li>
              ))}
            </ul>
          )}
        </section>
        <div class="side">
          <section aria-labelledby="commands-heading">
            <div class="section-head">
              <h2 id="commands-heading">Commands</h2>
              <span class="count">{commands.length} live</span>
            </div>
            {commands.length === 0 ? (
              <p class="empty">No commands.</p>
            ) : (
              <ul class="list" role="list">
                {commands.map((command) => (
                  <li key={command.number}>
                    <article class="card command" aria-labelledby={`command-${command.number}`}>
                      <h3 id={`command-${command.number}`}>
                        {commandLabel(command)} <span class="sub">{tableLabel(command.tableNumber)}</span>
                      </h3>
                      <span class="number">Command {command.number}</span>
                      <button
                        type="button"
                        class="primary"
                        aria-label={`Acknowledge command ${command.number}`}
                        disabled={busy.has(`command-${command.number}`)}
                        onClick={() => void acknowledge(command)}
                      >
                        Acknowledge
                      </button>
                    </article>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="failed-heading">
            <div class="section-head">
              <h2 id="failed-heading">Failed</h2>
              <span class="count">{failed.length}</span>
            </div>
            {failed.length === 0 ? (
              <p class="empty">{operator ? 'No failed orders.' : 'No failed orders seen.'}</p>
            ) : (
              <ul class="list" role="list">
                {failed.map((order) => (
                  <li key={order.number}>
                    <OrderCard order={order} now={now} operator={operator}>
                      {operator ? (
                        <button
                          type="button"
                          class="primary"
                          aria-label={`Recover order ${order.number}`}
                          disabled={busy.has(`order-${order.number}`)}
                          onClick={() => void recover(order)}
                        >
                          Recover
                        </button>
                      ) : (
                        <p class="note">Waiting for an operator</p>
                      )}
                    </OrderCard>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="finished-heading">
            <div class="section-head">
              <h2 id="finished-heading">Finished</h2>
            </div>
            {board.finished.length === 0 ? <p class="empty">Nothing finished yet.</p> : <FinishedList finished={board.finished} />}
          </section>
        </div>
      </main>
    </div>
  );
}

function ConnectionBadge({ connection, onRetry }: { connection: Connection; onRetry(): void }) {
  const text = {
    connecting: 'Connecting…',
    live: 'Live',
    waiting: 'Disconnected: reconnecting',
    stopped: 'Stopped',
  }[connection.state];
  return (
    <div class="connection" data-connection={connection.state}>
      <span class="dot" aria-hidden="true" />
      <span role="status" aria-live="polite">
        {text}
      </span>
      {connection.state === 'waiting' && (
        <button type="button" class="quiet" onClick={onRetry}>
          Retry now
        </button>
      )}
    </div>
  );
}

function OrderCard({ order, now, operator, children }: { order: BoardOrder; now: number; operator: boolean; children: ComponentChildren }) {
  const id = `order-${order.number}-${order.state}`;
  const since = order.state === 'FAILED' ? order.failedTime : order.orderTime;
  // Operators see the count; the register interface tells a kitchen only that it failed before.
  const failures = operator
    ? (order.failureCount ?? 0) > 0 && `Failed ${order.failureCount}×`
    : order.failedTime !== undefined && (order.state === 'FAILED' ? 'Failed' : 'Failed before');
  return (
    <article class={`card order ${urgency(order.state === 'PLACED' ? order.orderTime : undefined, now)}`} aria-labelledby={id}>
      <header>
        <h3 id={id}>
          Order {order.number} <span class="sub">{tableLabel(order.tableNumber)}</span>
        </h3>
        {since && (
          <time dateTime={since} title={clock(since)}>
            {age(since, now)}
          </time>
        )}
      </header>
      {failures && <p class="failures">{failures}</p>}
      <ul class="rows">
        {order.rows.map((row) => (
          <li key={row.rowNumber}>
            <span class="qty">{row.quantity}×</span> {row.name}
            {row.notes && <span class="notes">{row.notes}</span>}
          </li>
        ))}
      </ul>
      <div class="actions">{children}</div>
    </article>
  );
}

function FinishedList({ finished }: { finished: readonly FinishedOrder[] }) {
  return (
    <ul class="list finished" role="list">
      {finished.map(({ order }) => (
        <li key={order.number} class="fading" data-state={order.state}>
          <span class="number">Order {order.number}</span> <span class="sub">{tableLabel(order.tableNumber)}</span>{' '}
          <span class="outcome">{order.state === 'COMPLETED' ? 'Completed' : 'Aborted'}</span> <time dateTime={order.completeTime}>{clock(order.completeTime)}</time>
        </li>
      ))}
    </ul>
  );
}
