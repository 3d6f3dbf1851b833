/**
 * The order state machine: the one place that decides what a request does to an order.
 * Pure: it reads an order and an action and returns a decision; storage applies it.
 */

export const ORDER_STATES = ['SELECTING', 'NEW', 'PLACED', 'COMPLETED', 'ABORTED', 'FAILED'] as const;
export type OrderState = (typeof ORDER_STATES)[number];

export function isOrderState(value: string): value is OrderState {
  return (ORDER_STATES as readonly string[]).includes(value);
}

/** Orders a customer is still composing are invisible to registers, in lists and on streams. */
export function isVisibleToRegisters(state: OrderState): boolean {
  return state !== 'SELECTING' && state !== 'NEW';
}

/** What can be asked of an order, and by whom. */
export type OrderAction =
  /** A service client's status update (PUT statusupdate). */
  | { kind: 'status'; newState: OrderState }
  /** A processing failure report (POST failure, or a status update to FAILED). */
  | { kind: 'failure'; reason?: string }
  /** The customer app finishes adding items. */
  | { kind: 'finish' }
  /** The customer app submits the order. */
  | { kind: 'submit' }
  /** Operator recovery of a FAILED order (admin API, or a status update to PLACED). */
  | { kind: 'recover' }
  /** The customer session that owns the order was closed. */
  | { kind: 'session-closed' }
  /**
   * ORDER_AUTO_ABORT_AFTER ran out for the placement that began at `placedAt` (epoch ms): the
   * service aborts it, unless it moved on (finished, or placed again by a recovery).
   */
  | { kind: 'auto-abort'; placedAt: number };

/** The part of an order the machine reads. */
export interface OrderFacts {
  state: OrderState;
  failureCount: number;
  orderTime?: Date;
}

/** Field changes of an applied transition; timestamps are set to the decision's `now`. */
export interface OrderChange {
  state: OrderState;
  orderTime?: Date;
  completeTime?: Date;
  failedTime?: Date;
  failureCount?: number;
  /** A recovery starts a new placement, not overdue (see the order deadline). */
  overdue?: false;
}

/**
 * What a decision may need besides the order, each read only for the actions that need it
 * (`needsFailureThreshold`, `needsSession`), and read after the order.
 */
export interface DecisionInputs {
  /** The location's failure threshold: the failure count at which an order stays FAILED. */
  threshold?: number;
  /** Whether the customer session that owns the order is closed (or gone). */
  sessionClosed?: boolean;
}

export type Decision =
  { type: 'unchanged' } | { type: 'conflict'; detail: string } | { type: 'apply'; change: OrderChange };

const unchanged: Decision = { type: 'unchanged' };

function conflict(current: OrderState, action: string): Decision {
  return { type: 'conflict', detail: `Order is ${current}; cannot ${action}` };
}

/**
 * Whether deciding the action needs the location's failure threshold: only failure reports do,
 * so only they pay for reading it (and read it fresh, so that a changed threshold holds at once).
 */
export function needsFailureThreshold(action: OrderAction): boolean {
  return action.kind === 'failure' || (action.kind === 'status' && action.newState === 'FAILED');
}

/**
 * Whether deciding the action needs to know if the order's customer session is closed: a
 * customer's finish and submit do, so that a closed session's orders are never placed (the guest
 * has left). The session is read after the order; see the session close job for why that holds.
 */
export function needsSession(action: OrderAction): boolean {
  return action.kind === 'finish' || action.kind === 'submit';
}

/**
 * Decides one action against one order. `inputs` must hold the threshold when
 * `needsFailureThreshold(action)`, and whether the session is closed when `needsSession(action)`.
 */
export function decide(order: OrderFacts, action: OrderAction, inputs: DecisionInputs, now: Date): Decision {
  const { state } = order;
  switch (action.kind) {
    case 'status':
      return decideStatus(order, action.newState, inputs, now);
    case 'failure':
      if (state === 'FAILED') return unchanged; // already waiting for an operator
      if (state !== 'PLACED') return conflict(state, 'report a failure');
      return fail(order, inputs.threshold, now);
    case 'finish':
      if (state === 'NEW') return unchanged;
      if (state !== 'SELECTING') return conflict(state, 'finish');
      return sessionClosedConflict(inputs, 'finish') ?? { type: 'apply', change: { state: 'NEW' } };
    case 'submit':
      // (PLACED with the session closed: the close, still running, aborts it before it answers.)
      if (state === 'PLACED') return unchanged;
      if (state !== 'NEW') return conflict(state, 'submit');
      return sessionClosedConflict(inputs, 'submit') ?? { type: 'apply', change: { state: 'PLACED', orderTime: now } };
    case 'recover':
      if (state === 'PLACED') return unchanged;
      if (state !== 'FAILED') return conflict(state, 'recover');
      return { type: 'apply', change: { state: 'PLACED', orderTime: now, failureCount: 0, overdue: false } };
    case 'session-closed':
      if (state !== 'PLACED') return unchanged;
      return { type: 'apply', change: { state: 'ABORTED', completeTime: now } };
    case 'auto-abort':
      // a register that finished it first wins; a newer placement has deadlines of its own
      if (state !== 'PLACED' || order.orderTime?.getTime() !== action.placedAt) return unchanged;
      return { type: 'apply', change: { state: 'ABORTED', completeTime: now } };
  }
}

/** A customer's move of an order whose session is closed: refused, the order stays as it is. */
function sessionClosedConflict(inputs: DecisionInputs, action: string): Decision | undefined {
  if (inputs.sessionClosed === undefined) throw new Error(`a customer's ${action} is decided with its session's state`);
  return inputs.sessionClosed ? { type: 'conflict', detail: `Session is closed; cannot ${action}` } : undefined;
}

function decideStatus(order: OrderFacts, target: OrderState, inputs: DecisionInputs, now: Date): Decision {
  const { state } = order;
  if (target === state) return unchanged;
  switch (target) {
    case 'COMPLETED':
    case 'ABORTED':
      if (state !== 'PLACED') return conflict(state, `move to ${target}`);
      return { type: 'apply', change: { state: target, completeTime: now } };
    case 'FAILED':
      return decide(order, { kind: 'failure' }, inputs, now);
    case 'PLACED':
      return decide(order, { kind: 'recover' }, inputs, now);
    default:
      return conflict(state, `move to ${target}`);
  }
}

/** Below the threshold the order passes through FAILED straight back to PLACED. */
function fail(order: OrderFacts, threshold: number | undefined, now: Date): Decision {
  if (threshold === undefined) throw new Error("a failure report is decided with the location's failure threshold");
  const failureCount = order.failureCount + 1;
  const state: OrderState = failureCount < threshold ? 'PLACED' : 'FAILED';
  return { type: 'apply', change: { state, failedTime: now, failureCount } };
}

/**
 * Rows are replaced (customer app, PUT .../rows) only while the customer is still selecting.
 * Returns the 409 detail when the order is past that point.
 */
export function rowsReplacementConflict(order: Pick<OrderFacts, 'state'>): string | undefined {
  return order.state === 'SELECTING' ? undefined : `Order is ${order.state}; cannot replace rows`;
}
