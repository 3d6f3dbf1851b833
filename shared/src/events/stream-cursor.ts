/**
 * The event stream's cursor: where a client is in its location's stream, the highest order and
 * command numbers it has seen. Every event carries it as its id, `<orderNumber>.<commandNumber>`;
 * a client reconnects with it, as `Last-Event-ID` or as the `orderNumber` and `commandNumber`
 * query parameters. The one definition of its format, for the API, the register client and the
 * board. Pure (no Node, no DOM): the board bundles it.
 */

export interface StreamCursor {
  orderNumber: number;
  commandNumber: number;
}

/**
 * What a client asks for on connect: an absent number means nothing of that kind seen yet (all of it is replayed).
 */
export type CursorRequest = Partial<StreamCursor>;

/** A query parameter as HTTP servers hand it over. */
export type QueryValue = string | string[] | undefined;

/** At most 15 digits: every such number is exact in a double. */
const NUMBER = /^[0-9]{1,15}$/;
const EVENT_ID = /^([0-9]{1,15})\.([0-9]{1,15})$/;

/** The event id of a position. */
export function formatEventId(cursor: StreamCursor): string {
  return `${cursor.orderNumber}.${cursor.commandNumber}`;
}

/**
 * The position an event id names; undefined when `id` is not
 * `<orderNumber>.<commandNumber>` (a comment, a foreign id).
 */
export function parseEventId(id: string): StreamCursor | undefined {
  const match = EVENT_ID.exec(id);
  return match ? { orderNumber: Number(match[1]), commandNumber: Number(match[2]) } : undefined;
}

/**
 * The cursor of a connect's query parameters, each optional; or the name of the first one that is
 * not a non-negative integer (a repeated parameter is not one either).
 */
export function parseCursorQuery(
  query: Record<string, QueryValue>,
): { cursor: CursorRequest } | { invalid: keyof StreamCursor } {
  const cursor: CursorRequest = {};
  for (const name of ['orderNumber', 'commandNumber'] as const) {
    const value = query[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !NUMBER.test(value)) return { invalid: name };
    cursor[name] = Number(value);
  }
  return { cursor };
}

/** Where a stream that was asked for `request` starts: nothing seen is 0. */
export function startOf(request: CursorRequest): StreamCursor {
  return { orderNumber: request.orderNumber ?? 0, commandNumber: request.commandNumber ?? 0 };
}

/** The query string (with its `?`) that reconnects from `cursor`; empty without one (everything is replayed). */
export function cursorQuery(cursor: StreamCursor | undefined): string {
  return cursor
    ? `?${new URLSearchParams({ orderNumber: String(cursor.orderNumber), commandNumber: String(cursor.commandNumber) })}`
    : '';
}

/** The further of two positions, number by number: a client's cursor only ever moves forward. */
export function furthest(current: StreamCursor | undefined, next: StreamCursor): StreamCursor {
  if (!current) return { ...next };
  return {
    orderNumber: Math.max(current.orderNumber, next.orderNumber),
    commandNumber: Math.max(current.commandNumber, next.commandNumber),
  };
}
