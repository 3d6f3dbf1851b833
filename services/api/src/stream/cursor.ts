import { ProblemError, problems } from '@pos/shared/domain/problem';

/**
 * Where a client says it is: the highest order and command numbers it has seen.
 * An absent number means "nothing yet": everything of that kind is replayed.
 */
export interface Cursor {
  orderNumber?: number;
  commandNumber?: number;
}

/** What a stream has announced so far; every event carries it as its id. */
export interface StreamPosition {
  orderNumber: number;
  commandNumber: number;
}

const DIGITS = /^[0-9]{1,15}$/;
const EVENT_ID = /^([0-9]{1,15})\.([0-9]{1,15})$/;

type QueryValue = string | string[] | undefined;

function numberOf(name: string, value: QueryValue): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !DIGITS.test(value)) {
    throw new ProblemError(problems.illegalArgument(`${name} must be a non-negative integer`));
  }
  return Number(value);
}

/**
 * The reconnection cursor of a stream request. `Last-Event-ID` (`<orderNumber>.<commandNumber>`)
 * wins when present and not empty: a browser EventSource sends it on its own reconnects with the
 * first connection's URL, whose query is older. Otherwise the `orderNumber` / `commandNumber`
 * query parameters, each optional. Anything that is not a non-negative integer is a 400 problem.
 */
export function parseCursor(query: Record<string, QueryValue>, lastEventId: string): Cursor {
  if (lastEventId !== '') {
    const match = EVENT_ID.exec(lastEventId.trim());
    if (!match) {
      throw new ProblemError(problems.illegalArgument('Last-Event-ID must be <orderNumber>.<commandNumber>, two non-negative integers'));
    }
    return { orderNumber: Number(match[1]), commandNumber: Number(match[2]) };
  }
  const cursor: Cursor = {};
  const orderNumber = numberOf('orderNumber', query.orderNumber);
  const commandNumber = numberOf('commandNumber', query.commandNumber);
  if (orderNumber !== undefined) cursor.orderNumber = orderNumber;
  if (commandNumber !== undefined) cursor.commandNumber = commandNumber;
  return cursor;
}

export function startPosition(cursor: Cursor): StreamPosition {
  return { orderNumber: cursor.orderNumber ?? 0, commandNumber: cursor.commandNumber ?? 0 };
}

export function formatPosition(position: StreamPosition): string {
  return `${position.orderNumber}.${position.commandNumber}`;
}
