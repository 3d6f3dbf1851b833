/**
 * Response body schemas: what the serialisers produce, as JSON Schema. The TypeScript types of
 * the records (domain/records.ts) and the views (domain/views.ts; their schemas in
 * admin-views.ts, re-exported here) are derived from these (json-schema-to-ts), as the problem
 * body's is from its schema beside the problem table (domain/problem.ts), so a type and its
 * schema cannot drift; the OpenAPI document publishes them, and the contract tests check every
 * response against them.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { ORDER_STATES } from '../domain/order-state';
import { problemBodySchema, type ProblemBody } from '../domain/problem';
import { positiveInt, timestamp } from './shared-shapes';

export const orderRowSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rowNumber', 'productId', 'name', 'quantity', 'unitPrice'],
  properties: {
    rowNumber: { ...positiveInt, description: 'Position of the row in the order, from 1' },
    productId: { type: 'string' },
    name: { type: 'string' },
    quantity: positiveInt,
    unitPrice: { type: 'integer', minimum: 0, description: 'Price in minor currency units' },
    notes: { type: 'string' },
    modifiers: {
      type: 'array',
      description: "The row's modifiers, named and priced from the location's menu (docs/menu.md); absent when none",
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['productId', 'name', 'quantity', 'unitPrice'],
        properties: {
          productId: { type: 'string' },
          name: { type: 'string' },
          quantity: positiveInt,
          unitPrice: { type: 'integer', minimum: 0 },
        },
      },
    },
  },
} as const;

export const orderRecordSchema = {
  type: 'object',
  description: 'An order (part 2.1). Absent values are absent keys, never null. A record with `rows` is an order.',
  additionalProperties: false,
  required: ['number', 'state', 'rows', 'guestCount'],
  properties: {
    number: { ...positiveInt, description: "Order number; the location's own sequence" },
    state: { type: 'string', enum: ORDER_STATES },
    tableNumber: { ...positiveInt, description: 'Absent for takeout orders' },
    userNumber: { ...positiveInt, description: 'Absent when the order was created without a user session' },
    rows: { type: 'array', items: orderRowSchema },
    guestCount: { ...positiveInt, description: 'Number of guests; currently always 1' },
    orderTime: { ...timestamp, description: 'Set when the order moves to PLACED' },
    completeTime: { ...timestamp, description: 'Set when the order moves to COMPLETED or ABORTED' },
    failedTime: { ...timestamp, description: 'Set when the order moves to FAILED' },
  },
} as const;

/**
 * An order as the operator's reads show it (the admin order list and the admin event stream):
 * the order record and its failure count, which the register interface does not carry.
 */
export const operatorOrderRecordSchema = {
  ...orderRecordSchema,
  description: "An order as the operator's reads show it: the order record (part 2.1) and its failure count.",
  required: [...orderRecordSchema.required, 'failureCount'],
  properties: {
    ...orderRecordSchema.properties,
    failureCount: {
      type: 'integer',
      minimum: 0,
      description: 'Failures reported since the order was placed or last recovered',
    },
    overdue: {
      type: 'boolean',
      const: true,
      description:
        "Present while the order's placement went past its location's order deadline " +
        "(docs/presence-and-deadlines.md); never in a register's record",
    },
  },
} as const;

export const commandRecordSchema = {
  type: 'object',
  description:
    'A command (part 2.2): the record shape of orders without `rows`, ' +
    'always PLACED. Its kind is carried by one field: ' +
    '`readTableState` (READ_TABLE_STATE), `paymentNumber` (REQUEST_BILL), ' +
    '`exportMainData` (EXPORT_DATA, FETCH_REMOTE_MENU).',
  additionalProperties: false,
  required: ['number', 'state'],
  properties: {
    number: { ...positiveInt, description: "Command number; the location's own sequence, separate from orders'" },
    state: { type: 'string', const: 'PLACED' },
    tableNumber: positiveInt,
    readTableState: { type: 'boolean', const: true },
    paymentNumber: { type: 'integer', const: 1 },
    exportMainData: { type: 'boolean', const: true },
  },
} as const;

export const healthSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['status', 'version', 'commit'],
  properties: {
    status: { type: 'string', const: 'ok' },
    version: { type: 'string', description: 'The release this node runs (semver)', examples: ['0.5.0'] },
    commit: {
      type: 'string',
      description: 'The commit it was built from, or `unknown`',
      examples: ['14e85b5c0d9b8a4f2e6c5d1a3b7f9e0c2d4a6b8c'],
    },
  },
} as const;

export const readinessSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['status', 'mongo', 'redis'],
  properties: {
    status: { type: 'string', const: 'ready' },
    mongo: { type: 'string', const: 'ok' },
    redis: { type: 'string', const: 'ok' },
  },
} as const;

export type OrderRow = FromSchema<typeof orderRowSchema>;
export type OrderRecord = FromSchema<typeof orderRecordSchema>;
export type OperatorOrderRecord = FromSchema<typeof operatorOrderRecordSchema>;
export type CommandRecord = FromSchema<typeof commandRecordSchema>;
export type HealthBody = FromSchema<typeof healthSchema>;
export type ReadinessBody = FromSchema<typeof readinessSchema>;

// Defined with the problem table; published with the other bodies.
export { problemBodySchema, type ProblemBody };

// The operator surfaces' bodies, defined in admin-views.ts.
export * from './admin-views';
