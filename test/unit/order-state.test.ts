import { Decision, OrderAction, OrderState, ORDER_STATES, decide, needsSession } from '@pos/shared/domain/order-state';

const now = new Date('2026-11-21T07:11:04.092Z');
const THRESHOLD = 3;
const at = (state: OrderState, failureCount = 0) => ({ state, failureCount });
const OPEN = { threshold: THRESHOLD, sessionClosed: false };
const run = (state: OrderState, action: OrderAction, failureCount = 0): Decision =>
  decide(at(state, failureCount), action, OPEN, now);
const status = (newState: OrderState): OrderAction => ({ kind: 'status', newState });

describe('the transition table of the interface (part 3)', () => {
  it('SELECTING to NEW when the customer finishes', () => {
    expect(run('SELECTING', { kind: 'finish' })).toEqual({ type: 'apply', change: { state: 'NEW' } });
  });

  it('NEW to PLACED when the customer submits, setting orderTime', () => {
    expect(run('NEW', { kind: 'submit' })).toEqual({ type: 'apply', change: { state: 'PLACED', orderTime: now } });
  });

  it('PLACED to COMPLETED by a status update, setting completeTime', () => {
    expect(run('PLACED', status('COMPLETED'))).toEqual({
      type: 'apply',
      change: { state: 'COMPLETED', completeTime: now },
    });
  });

  it('PLACED to ABORTED by a status update, setting completeTime', () => {
    expect(run('PLACED', status('ABORTED'))).toEqual({
      type: 'apply',
      change: { state: 'ABORTED', completeTime: now },
    });
  });

  it('PLACED to ABORTED when the customer session closes', () => {
    expect(run('PLACED', { kind: 'session-closed' })).toEqual({
      type: 'apply',
      change: { state: 'ABORTED', completeTime: now },
    });
  });

  it('a failure below the threshold passes through FAILED back to PLACED, setting failedTime', () => {
    expect(run('PLACED', { kind: 'failure' }, 0)).toEqual({
      type: 'apply',
      change: { state: 'PLACED', failedTime: now, failureCount: 1 },
    });
    expect(run('PLACED', { kind: 'failure' }, 1)).toEqual({
      type: 'apply',
      change: { state: 'PLACED', failedTime: now, failureCount: 2 },
    });
  });

  it('the failure that reaches the threshold leaves the order FAILED', () => {
    expect(run('PLACED', { kind: 'failure' }, 2)).toEqual({
      type: 'apply',
      change: { state: 'FAILED', failedTime: now, failureCount: 3 },
    });
  });

  it('a failure reported on a FAILED order keeps it FAILED for the operator', () => {
    expect(run('FAILED', { kind: 'failure' }, 3)).toEqual({ type: 'unchanged' });
  });

  it('a threshold of 1 fails on the first report', () => {
    expect(decide(at('PLACED'), { kind: 'failure' }, { threshold: 1 }, now)).toEqual({
      type: 'apply',
      change: { state: 'FAILED', failedTime: now, failureCount: 1 },
    });
  });
});

describe('the decisions on status updates', () => {
  it('a status update to FAILED is a failure report', () => {
    expect(run('PLACED', status('FAILED'), 0)).toEqual(run('PLACED', { kind: 'failure' }, 0));
    expect(run('PLACED', status('FAILED'), 2)).toEqual(run('PLACED', { kind: 'failure' }, 2));
  });

  it('a status update to PLACED on a FAILED order is operator recovery: count reset, orderTime set', () => {
    const recovery = { type: 'apply', change: { state: 'PLACED', orderTime: now, failureCount: 0, overdue: false } };
    expect(run('FAILED', status('PLACED'), 3)).toEqual(recovery);
    expect(run('FAILED', { kind: 'recover' }, 3)).toEqual(recovery);
  });

  it.each(ORDER_STATES)('repeating the state an order already has (%s) changes nothing', (state) => {
    expect(run(state, status(state))).toEqual({ type: 'unchanged' });
  });

  const allowed = new Set(['PLACED>COMPLETED', 'PLACED>ABORTED', 'PLACED>FAILED', 'FAILED>PLACED']);
  const pairs = ORDER_STATES.flatMap((from) => ORDER_STATES.map((to) => [from, to] as const)).filter(
    ([from, to]) => from !== to && !allowed.has(`${from}>${to}`),
  );

  it.each(pairs)('%s to %s is a conflict naming the current state', (from, to) => {
    const decision = run(from, status(to));
    expect(decision.type).toBe('conflict');
    expect(decision.type === 'conflict' && decision.detail).toMatch(new RegExp(`^Order is ${from}\\b`));
  });

  it('COMPLETED to ABORTED is a conflict', () => {
    expect(run('COMPLETED', status('ABORTED'))).toEqual({
      type: 'conflict',
      detail: 'Order is COMPLETED; cannot move to ABORTED',
    });
  });
});

describe('customer and operator actions out of place', () => {
  it.each([
    ['NEW', 'finish', 'unchanged'],
    ['PLACED', 'finish', 'conflict'],
    ['SELECTING', 'submit', 'conflict'],
    ['PLACED', 'submit', 'unchanged'],
    ['COMPLETED', 'submit', 'conflict'],
    ['PLACED', 'recover', 'unchanged'],
    ['COMPLETED', 'recover', 'conflict'],
    ['SELECTING', 'failure', 'conflict'],
    ['COMPLETED', 'failure', 'conflict'],
    ['ABORTED', 'session-closed', 'unchanged'],
    ['COMPLETED', 'session-closed', 'unchanged'],
    ['SELECTING', 'session-closed', 'unchanged'],
  ] as const)('%s + %s is %s', (state, kind, expected) => {
    expect(run(state, { kind } as OrderAction).type).toBe(expected);
  });
});

describe('a customer move on a closed session', () => {
  const closed = (state: OrderState, kind: 'finish' | 'submit') =>
    decide(at(state), { kind }, { sessionClosed: true }, now);

  it('only the customer moves (finish, submit) need the session', () => {
    expect(needsSession({ kind: 'finish' })).toBe(true);
    expect(needsSession({ kind: 'submit' })).toBe(true);
    for (const action of [
      { kind: 'failure' },
      { kind: 'recover' },
      { kind: 'session-closed' },
      status('ABORTED'),
    ] as OrderAction[]) {
      expect(needsSession(action)).toBe(false);
    }
  });

  it('a NEW order of a closed session is not placed, a SELECTING one not finished', () => {
    expect(closed('NEW', 'submit')).toEqual({ type: 'conflict', detail: 'Session is closed; cannot submit' });
    expect(closed('SELECTING', 'finish')).toEqual({ type: 'conflict', detail: 'Session is closed; cannot finish' });
  });

  it('what a move would not change answers as before (the close aborts a PLACED order itself)', () => {
    expect(closed('PLACED', 'submit')).toEqual({ type: 'unchanged' });
    expect(closed('NEW', 'finish')).toEqual({ type: 'unchanged' });
    expect(closed('ABORTED', 'submit')).toEqual({ type: 'conflict', detail: 'Order is ABORTED; cannot submit' });
  });

  it("is decided only with the session's state", () => {
    expect(() => decide(at('NEW'), { kind: 'submit' }, {}, now)).toThrow(/session/);
  });
});

describe('the auto-abort of a placement (ORDER_AUTO_ABORT_AFTER)', () => {
  const placedAt = new Date('2026-11-21T07:00:00.000Z');
  const action: OrderAction = { kind: 'auto-abort', placedAt: placedAt.getTime() };

  it('aborts the order still PLACED in that placement, setting completeTime', () => {
    expect(decide({ state: 'PLACED', failureCount: 1, orderTime: placedAt }, action, {}, now)).toEqual({
      type: 'apply',
      change: { state: 'ABORTED', completeTime: now },
    });
  });

  it('changes nothing once the order moved on: finished, failed, or placed again by a recovery', () => {
    for (const state of ['COMPLETED', 'ABORTED', 'FAILED'] as const) {
      expect(decide({ state, failureCount: 0, orderTime: placedAt }, action, {}, now)).toEqual({ type: 'unchanged' });
    }
    expect(
      decide({ state: 'PLACED', failureCount: 0, orderTime: new Date(placedAt.getTime() + 1) }, action, {}, now),
    ).toEqual({ type: 'unchanged' });
  });
});
