/**
 * The signed-in board: the location's open orders, failed orders, live commands and the last
 * finished orders (one component per column), kept current by useLiveBoard; the actions on
 * them, one at a time per button.
 */
import type { CommandRecord } from '@pos/shared/domain/records';
import type { AvailabilityInput } from '@pos/shared/domain/records';
import { useEffect, useState } from 'preact/hooks';
import type { BoardApi } from './api';
import { BoardOrder, removeCommand, sorted } from './board-state';
import { CommandsColumn } from './commands-column';
import { FailedColumn } from './failed-column';
import { FinishedColumn } from './finished-column';
import { Header } from './header';
import { LocationStatusBar } from './location-status';
import { MenuColumn } from './menu-column';
import { OrdersColumn } from './orders-column';
import { Problems } from './problems';
import { useLiveBoard } from './use-live-board';
import { productsOf, useMenu } from './use-menu';

/** How long an Abort waits for its confirming second press. */
const CONFIRM_MS = 4_000;

export interface BoardProps {
  api: BoardApi;
  title: string;
  onSignOut(message?: string): void;
}

export function Board({ api, title, onSignOut }: BoardProps) {
  const live = useLiveBoard(api, onSignOut);
  const { menu, read: readMenu } = useMenu(api, live.fail);
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set());
  const [confirming, setConfirming] = useState<number | undefined>(undefined);

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
      live.fail(err);
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
      live.applyAnswer(await api.setStatus(order.number, newState));
      live.announce(`Order ${order.number} ${newState === 'COMPLETED' ? 'completed' : 'aborted'}`);
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
      live.applyAnswer(await api.recover!(order.number));
      live.announce(`Order ${order.number} recovered`);
    });

  const acknowledge = (command: CommandRecord) =>
    act(`command-${command.number}`, async () => {
      try {
        await api.acknowledge(command.number);
      } catch (err) {
        // acknowledged elsewhere meanwhile (or expired): it is gone all the same
        if (!(err instanceof Error && /does not exist/.test(err.message))) throw err;
      }
      live.change((state) => removeCommand(state, command.number));
      live.announce(`Command ${command.number} acknowledged`);
    });

  const togglePause = (paused: boolean) =>
    act('location', async () => {
      live.applyLocation(paused ? await api.resume!() : await api.pause!());
    });

  const setAvailability = (productId: string, availability: AvailabilityInput) =>
    act('menu', async () => {
      try {
        await api.setAvailability(productId, availability);
        live.announce(availability.available ? 'Snooze lifted' : 'Product snoozed');
      } finally {
        readMenu();
      }
    });

  const { board, now } = live;
  const operator = api.mode === 'operator';
  // a viewer reads: no button that would change something (the API would refuse it with a 403)
  const canAct = api.canAct;

  return (
    <div class="board">
      <Header
        title={title}
        operator={operator}
        role={api.role}
        connection={live.connection}
        onRetry={live.retryNow}
        onSignOut={() => onSignOut()}
      />
      <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true">
        {live.announcement}
      </div>
      <Problems problems={live.problems} onDismiss={live.dismissProblems} />
      {operator && live.status && (
        <LocationStatusBar
          status={live.status}
          now={now}
          busy={busy.has('location')}
          onPause={() => void togglePause(false)}
          onResume={() => void togglePause(true)}
        />
      )}
      {/* busy until the first read is in: what shows meanwhile is not yet the location's work */}
      <main class="columns" aria-busy={!live.loaded}>
        <OrdersColumn
          orders={sorted(board.placed)}
          now={now}
          operator={operator}
          canAct={canAct}
          busy={busy}
          confirming={confirming}
          onComplete={(order) => void finish(order, 'COMPLETED')}
          onAbort={abort}
        />
        <div class="side">
          <CommandsColumn
            commands={sorted(board.commands)}
            canAct={canAct}
            busy={busy}
            onAcknowledge={(command) => void acknowledge(command)}
          />
          <FailedColumn
            orders={sorted(board.failed)}
            now={now}
            operator={operator}
            canAct={canAct}
            busy={busy}
            onRecover={(order) => void recover(order)}
          />
          {menu !== undefined && (
            <MenuColumn
              products={menu && productsOf(menu)}
              canAct={canAct}
              busy={busy.has('menu')}
              onSet={(productId, availability) => void setAvailability(productId, availability)}
            />
          )}
          <FinishedColumn finished={board.finished} />
        </div>
      </main>
    </div>
  );
}
