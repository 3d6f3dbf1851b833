/**
 * The board's rules for reads and events (web/board/src/board-state.ts): a read replaces the
 * open work, events move orders between columns, final states stay final.
 */
import {
  applyCommand,
  applyOrder,
  applyRead,
  BoardOrder,
  BoardState,
  emptyBoard,
  expireFinished,
  FINISHED_SHOWN,
  FINISHED_VISIBLE_MS,
  removeCommand,
  revealedBy,
  sorted,
} from '@pos/board/board-state';
import type { CommandRecord } from '@pos/shared/domain/records';

const order = (number: number, state: BoardOrder['state'], extra: Partial<BoardOrder> = {}): BoardOrder => ({
  number,
  state,
  rows: [{ rowNumber: 1, productId: 'p', name: 'P', quantity: 1, unitPrice: 100 }],
  guestCount: 1,
  ...extra,
});
const command = (number: number): CommandRecord => ({ number, state: 'PLACED', paymentNumber: 1 });
const numbers = (map: BoardState['placed']) => sorted(map).map((o) => o.number);

describe('board state', () => {
  it('moves an order between the columns by its state', () => {
    let board = applyOrder(emptyBoard, order(1, 'PLACED', { failureCount: 0 }), 0);
    board = applyOrder(board, order(2, 'PLACED'), 0);
    expect(numbers(board.placed)).toEqual([1, 2]);
    board = applyOrder(board, order(1, 'FAILED', { failureCount: 3 }), 0);
    expect(numbers(board.placed)).toEqual([2]);
    expect(numbers(board.failed)).toEqual([1]);
    board = applyOrder(board, order(1, 'PLACED', { failureCount: 0 }), 0);
    expect(numbers(board.failed)).toEqual([]);
    board = applyOrder(board, order(2, 'COMPLETED'), 5);
    expect(numbers(board.placed)).toEqual([1]);
    expect(board.finished).toEqual([{ order: order(2, 'COMPLETED'), seenAt: 5 }]);
    // SELECTING and NEW never reach the board
    expect(applyOrder(board, order(9, 'NEW'), 0)).toBe(board);
  });

  it('keeps COMPLETED and ABORTED final against older events and reads', () => {
    let board = applyOrder(emptyBoard, order(3, 'ABORTED'), 0);
    board = applyOrder(board, order(3, 'PLACED'), 1);
    expect(numbers(board.placed)).toEqual([]);
    board = applyRead(board, { placed: [order(3, 'PLACED'), order(4, 'PLACED')], commands: [] });
    expect(numbers(board.placed)).toEqual([4]);
  });

  it('keeps the known failure count for an answer that has none, while the state is the same', () => {
    let board = applyOrder(emptyBoard, order(5, 'PLACED', { failureCount: 2 }), 0);
    board = applyOrder(board, order(5, 'PLACED', { tableNumber: 1 }), 0);
    expect(board.placed.get(5)?.failureCount).toBe(2);
    board = applyOrder(board, order(5, 'FAILED'), 0);
    expect(board.failed.get(5)?.failureCount).toBeUndefined();
  });

  it('lets a read replace the open work, and keeps the finished orders until they fade', () => {
    let board = applyOrder(emptyBoard, order(1, 'PLACED'), 0);
    board = applyOrder(board, order(2, 'FAILED'), 0);
    board = applyOrder(board, order(3, 'COMPLETED'), 0);
    board = applyCommand(board, command(1));
    // a kitchen's read: PLACED orders and commands only
    board = applyRead(board, { placed: [order(4, 'PLACED')], commands: [command(2)] });
    expect(numbers(board.placed)).toEqual([4]);
    expect(numbers(board.failed)).toEqual([]);
    expect(sorted(board.commands).map((c) => c.number)).toEqual([2]);
    expect(board.finished.map((f) => f.order.number)).toEqual([3]);
    // ... but FAILED orders it saw fail are kept while the stream stayed connected
    board = applyOrder(board, order(5, 'FAILED'), 0);
    board = applyOrder(board, order(6, 'FAILED'), 0);
    board = applyRead(board, { placed: [order(4, 'PLACED'), order(6, 'PLACED')], commands: [] }, true);
    expect(numbers(board.failed)).toEqual([5]);
    expect(numbers(board.placed)).toEqual([4, 6]);
    // an operator's read has the FAILED ones too
    board = applyRead(board, { placed: [], failed: [order(2, 'FAILED')], commands: [] });
    expect(numbers(board.failed)).toEqual([2]);
    expect(expireFinished(board, FINISHED_VISIBLE_MS - 1)).toBe(board);
    expect(expireFinished(board, FINISHED_VISIBLE_MS).finished).toEqual([]);
  });

  it('shows the newest finished orders first, a bounded number of them', () => {
    let board = emptyBoard;
    for (let n = 1; n <= FINISHED_SHOWN + 2; n += 1)
      board = applyOrder(board, order(n, n % 2 ? 'COMPLETED' : 'ABORTED'), n);
    expect(board.finished.map((f) => f.order.number)).toEqual(
      Array.from({ length: FINISHED_SHOWN }, (_, i) => FINISHED_SHOWN + 2 - i),
    );
  });

  it('adds and removes commands', () => {
    const board = applyCommand(applyCommand(emptyBoard, command(2)), command(1));
    expect(sorted(board.commands).map((c) => c.number)).toEqual([1, 2]);
    expect(sorted(removeCommand(board, 1).commands).map((c) => c.number)).toEqual([2]);
    expect(removeCommand(board, 7)).toEqual(board);
  });

  it('tells which work a read shows first: new PLACED and FAILED orders and new commands, never a final one', () => {
    let before = applyOrder(emptyBoard, order(1, 'PLACED'), 0);
    before = applyOrder(before, order(2, 'FAILED'), 0);
    before = applyOrder(before, order(3, 'COMPLETED'), 0);
    before = applyCommand(before, command(1));
    const after = applyRead(before, {
      placed: [order(1, 'PLACED'), order(3, 'PLACED'), order(5, 'PLACED', { tableNumber: 7 }), order(2, 'PLACED')],
      failed: [order(4, 'FAILED')],
      commands: [command(1), command(2)],
    });
    const revealed = revealedBy(before, after);
    expect(revealed.orders.map((o) => [o.number, o.state])).toEqual([
      [2, 'PLACED'],
      [5, 'PLACED'],
      [4, 'FAILED'],
    ]);
    expect(revealed.commands.map((c) => c.number)).toEqual([2]);
    // a read of the same work again shows nothing new
    const again = applyRead(after, {
      placed: sorted(after.placed),
      failed: sorted(after.failed),
      commands: sorted(after.commands),
    });
    expect(revealedBy(after, again)).toEqual({ orders: [], commands: [] });
  });
});
