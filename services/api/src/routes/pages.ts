import { ProblemError } from '@pos/shared/domain/problem';
import { problemFromSchemaError, Validator } from '@pos/shared/schemas/requests';
import type { AppContext } from '../context';

/** The query checked against a schema (numbers read, defaults filled in), or a 400 problem naming the first fault. */
export function queryOf<T>(ctx: AppContext, validator: Validator<T>): T {
  const query: unknown = { ...ctx.query };
  if (!validator(query)) throw new ProblemError(problemFromSchemaError(validator.errors![0]!));
  return query;
}

/**
 * Answers one page of a list (a bare array, like every list of the interface). A full page may
 * have a next one: its address is in `Link: <…>; rel="next"`, the same query with `after` set to
 * the last item's cursor. A shorter page is the last.
 */
export function sendPage<T>(ctx: AppContext, items: T[], limit: number, cursorOf: (last: T) => string | number): void {
  const last = items.at(-1);
  linkNext(ctx, last !== undefined && items.length >= limit ? cursorOf(last) : undefined);
  ctx.body = items;
}

/** `Link: <this query, after the cursor>; rel="next"`, when there is a next page. */
export function linkNext(ctx: AppContext, after: string | number | undefined): void {
  if (after === undefined) return;
  const query = new URLSearchParams(ctx.querystring);
  query.set('after', String(after));
  ctx.set('Link', `<${ctx.path}?${query}>; rel="next"`);
}
