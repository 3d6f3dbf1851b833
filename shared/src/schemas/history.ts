/**
 * The query of a location's order history (GET /admin/v1/locations/{id}/history): a time range
 * of completion times and cursor pagination (`limit`, `after`), as the admin lists page.
 */
import { ProblemError, problems } from '../domain/problem';
import type { HistoryQuery } from '../store/archive';
import { decodeHistoryCursor } from './history-cursor';
import { compile } from './requests';

export const HISTORY_LIMITS = { default: 100, max: 1000 } as const;

/** The query parameters as they arrive (strings); described once, for validation and documents. */
export const historyQuerySchema = {
  type: 'object',
  properties: {
    from: { type: 'string', format: 'date-time', description: 'completed at or after (inclusive)' },
    to: { type: 'string', format: 'date-time', description: 'completed before (exclusive)' },
    limit: {
      type: 'string',
      pattern: '^[1-9][0-9]{0,3}$',
      description: `orders per page, 1 to ${HISTORY_LIMITS.max} (default ${HISTORY_LIMITS.default})`,
    },
    after: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      description: 'the cursor after the last order of the previous page (as in the `Link: rel="next"` of a full page)',
    },
  },
};

interface RawHistoryQuery {
  from?: string;
  to?: string;
  limit?: string;
  after?: string;
}

const validate = compile<RawHistoryQuery>(historyQuerySchema);

const PARAMETER_RULES: Record<string, string> = {
  from: 'from must be an ISO-8601 date-time',
  to: 'to must be an ISO-8601 date-time',
  limit: `limit must be an integer from 1 to ${HISTORY_LIMITS.max}`,
  after: 'after must be the cursor after an order of a previous page',
};

/** Reads the query; a bad parameter is a 400 `Illegal argument` naming it. */
export function parseHistoryQuery(
  query: Record<string, string | string[] | undefined>,
): Omit<HistoryQuery, 'locationId'> {
  const given: Record<string, unknown> = {};
  for (const name of Object.keys(PARAMETER_RULES)) if (query[name] !== undefined) given[name] = query[name];
  if (!validate(given)) {
    const name = validate.errors?.[0]?.instancePath.slice(1) ?? '';
    throw new ProblemError(problems.illegalArgument(PARAMETER_RULES[name] ?? 'invalid query'));
  }
  const raw: RawHistoryQuery = given;
  const limit = raw.limit === undefined ? HISTORY_LIMITS.default : Number(raw.limit);
  if (limit > HISTORY_LIMITS.max) throw new ProblemError(problems.illegalArgument(PARAMETER_RULES.limit!));
  const after = raw.after === undefined ? undefined : decodeHistoryCursor(raw.after);
  if (raw.after !== undefined && !after) throw new ProblemError(problems.illegalArgument(PARAMETER_RULES.after!));
  return {
    from: raw.from === undefined ? undefined : new Date(raw.from),
    to: raw.to === undefined ? undefined : new Date(raw.to),
    limit,
    after,
  };
}
