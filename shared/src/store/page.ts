/**
 * Cursor pagination of admin lists: at most `limit` items after the cursor, in the list's order.
 * The cursor is the id of the last item of the previous page (an order's or command's number,
 * a location's or session's id), so a walk neither repeats nor skips items created meanwhile,
 * and each page is one index range scan: no skip, no count.
 */
export interface Page<Cursor> {
  limit: number;
  after?: Cursor;
}

/** What a list without `limit` returns, and the most one page may hold. */
export const PAGE_LIMITS = { default: 100, max: 1000 } as const;
