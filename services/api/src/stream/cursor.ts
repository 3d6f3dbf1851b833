import { ProblemError, problems } from '@pos/shared/domain/problem';
import { CursorRequest, parseCursorQuery, parseEventId, QueryValue } from '@pos/shared/events/stream-cursor';

/**
 * The reconnection cursor of a stream request (its format: @pos/shared/events/stream-cursor).
 * `Last-Event-ID` wins when present and not empty: a browser EventSource sends it on its own
 * reconnects with the first connection's URL, whose query is older. Otherwise the `orderNumber` /
 * `commandNumber` query parameters, each optional. Anything that is not a non-negative integer
 * is a 400 problem.
 */
export function parseCursor(query: Record<string, QueryValue>, lastEventId: string): CursorRequest {
  if (lastEventId !== '') {
    const cursor = parseEventId(lastEventId.trim());
    if (!cursor) {
      throw new ProblemError(
        problems.illegalArgument('Last-Event-ID must be <orderNumber>.<commandNumber>, two non-negative integers'),
      );
    }
    return cursor;
  }
  const parsed = parseCursorQuery(query);
  if ('invalid' in parsed)
    throw new ProblemError(problems.illegalArgument(`${parsed.invalid} must be a non-negative integer`));
  return parsed.cursor;
}
