/**
 * Cursor pagination of admin lists: at most `limit` items after the cursor, in the list's order.
 * The cursor is the id of the last item of the previous page (an order's or command's number,
 * a location's or session's id), so a walk neither repeats nor skips items created meanwhile,
 * and each page is one index range scan: no skip, no count. The query schemas (and the limits)
 * are in schemas/requests.ts.
 */
export interface Page<Cursor> {
  limit: number;
  after?: Cursor;
}
