/**
 * List query schemas, compiled once: every list query the service accepts (pages, filters). The
 * query types are derived from the schemas (json-schema-to-ts), and the OpenAPI document publishes
 * the same objects.
 */
import Ajv from 'ajv';
import { INSTANT_FORMAT } from './instants';
import type { FromSchema } from 'json-schema-to-ts';
import { ORDER_STATES } from '../domain/order-state';
import { EVENT_ID_PATTERN } from '../webhooks/event-types';
import { LIMITS, type Validator } from './requests';

/** Query strings are text: their numbers are read as numbers, and absent values take their defaults. */
const queryAjv = new Ajv({ allErrors: false, strict: true, coerceTypes: true, useDefaults: true });
queryAjv.addFormat('date-time', INSTANT_FORMAT);

const limit = {
  type: 'integer',
  minimum: 1,
  maximum: LIMITS.pageMax,
  default: LIMITS.pageDefault,
  description: 'The most items on this page; a shorter page is the last',
} as const;

/** A page of a list ordered by id (locations, sessions): `after` is the last id of the previous page. */
export const idPageQuerySchema = {
  type: 'object',
  properties: {
    limit,
    after: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The id of the last item of the previous page; absent for the first page',
    },
  },
} as const;

/** A page of a list ordered by number (orders, commands): `after` is the last number of the previous page. */
export const numberPageQuerySchema = {
  type: 'object',
  properties: {
    limit,
    after: {
      type: 'integer',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'The number of the last item of the previous page; absent for the first page',
    },
  },
} as const;

export const orderListQuerySchema = {
  type: 'object',
  required: ['state'],
  properties: {
    state: {
      type: 'string',
      enum: ORDER_STATES,
      description: 'The state of the orders listed; another name is a 400 "No enum constant ..."',
    },
    overdue: { type: 'boolean', description: '`true`: only overdue orders; `false`: only the others' },
    ...numberPageQuerySchema.properties,
  },
} as const;

/** The admin list of locations: a page by id, filtered on presence when asked. */
export const locationListQuerySchema = {
  type: 'object',
  properties: {
    online: { type: 'boolean', description: '`false`: the dark locations; `true`: those online' },
    ...idPageQuerySchema.properties,
  },
} as const;

/** The audit log's filters and page: newest first, `after` the id of the last record of the previous page. */
export const auditQuerySchema = {
  type: 'object',
  properties: {
    locationId: { type: 'string', minLength: 1, maxLength: 64, description: 'Only records of this location' },
    operatorId: { type: 'string', minLength: 1, maxLength: 64, description: 'Only records of this operator' },
    from: {
      type: 'string',
      format: 'date-time',
      maxLength: LIMITS.timestampLength,
      description: 'Only records at or after this time',
    },
    to: {
      type: 'string',
      format: 'date-time',
      maxLength: LIMITS.timestampLength,
      description: 'Only records before this time',
    },
    ...idPageQuerySchema.properties,
  },
} as const;

/** One stretch of the audit chain's check: after the record `after` (absent: from where the chain starts). */
export const auditVerifyQuerySchema = {
  type: 'object',
  properties: {
    after: {
      type: 'integer',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'The `lastSeq` of the previous stretch; absent for the first',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000,
      default: 10_000,
      description: 'The most records this stretch checks',
    },
  },
} as const;

/** The event feed's filters and page: oldest first, `after` the id of the last event of the previous page. */
export const eventFeedQuerySchema = {
  type: 'object',
  properties: {
    limit,
    after: {
      type: 'string',
      pattern: EVENT_ID_PATTERN,
      maxLength: 64,
      description: 'The `id` of the last event of the previous page; absent for the first page',
    },
    locationId: { type: 'string', minLength: 1, maxLength: 64, description: 'Only events of this location' },
    types: {
      type: 'string',
      minLength: 1,
      maxLength: 1000,
      description: 'Only events of these types, comma-separated (`order.placed,order.completed`)',
    },
  },
} as const;

export type IdPageQuery = FromSchema<typeof idPageQuerySchema>;
export type NumberPageQuery = FromSchema<typeof numberPageQuerySchema>;
export type OrderListQuery = FromSchema<typeof orderListQuerySchema>;
export type LocationListQuery = FromSchema<typeof locationListQuerySchema>;
export type AuditQuery = FromSchema<typeof auditQuerySchema>;
export type AuditVerifyQuery = FromSchema<typeof auditVerifyQuerySchema>;
export type EventFeedQuery = FromSchema<typeof eventFeedQuerySchema>;

/** An integer in a query string: decimal digits (`0x10` and `1e3` are numbers to JavaScript, not to a reader). */
const DECIMAL = /^-?[0-9]+$/;

/**
 * A query validator: numbers coerced, defaults filled in (on a copy of the query it is given).
 * Integers are taken in decimal only: coercion alone would read any JavaScript number.
 */
function compileQuery<T>(schema: { properties: Record<string, { type?: string }> }): Validator<T> {
  const validate = queryAjv.compile<T>(schema);
  const integers = Object.keys(schema.properties).filter((name) => schema.properties[name]!.type === 'integer');
  const checked = ((query: Record<string, unknown>) => {
    const name = integers.find((n) => typeof query[n] === 'string' && !DECIMAL.test(query[n] as string));
    if (name !== undefined) {
      checked.errors = [
        {
          instancePath: `/${name}`,
          schemaPath: `#/properties/${name}/type`,
          keyword: 'type',
          params: { type: 'integer' },
          message: 'must be integer',
        },
      ];
      return false;
    }
    const valid = validate(query);
    checked.errors = validate.errors;
    return valid;
  }) as Validator<T>;
  return checked;
}

export const queryValidators = {
  idPage: compileQuery<IdPageQuery>(idPageQuerySchema),
  numberPage: compileQuery<NumberPageQuery>(numberPageQuerySchema),
  orderList: compileQuery<OrderListQuery>(orderListQuerySchema),
  locationList: compileQuery<LocationListQuery>(locationListQuerySchema),
  audit: compileQuery<AuditQuery>(auditQuerySchema),
  auditVerify: compileQuery<AuditVerifyQuery>(auditVerifyQuerySchema),
  eventFeed: compileQuery<EventFeedQuery>(eventFeedQuerySchema),
};
