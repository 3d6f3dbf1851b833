/**
 * Response body schemas: what the serialisers produce, as JSON Schema. The TypeScript types of
 * the records (domain/records.ts) and the views (store/locations.ts, store/sessions.ts) are
 * derived from these (json-schema-to-ts), as the problem body's is from its schema beside the
 * problem table (domain/problem.ts), so a type and its schema cannot drift; the OpenAPI document
 * publishes them, and the contract tests check every response against them.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { ORDER_STATES } from '../domain/order-state';
import { problemBodySchema, type ProblemBody } from '../domain/problem';

const timestamp = {
  type: 'string',
  format: 'date-time',
  description: 'ISO-8601 UTC with milliseconds',
  examples: ['2026-11-21T07:11:04.092Z'],
} as const;

const positiveInt = { type: 'integer', minimum: 1 } as const;

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
    failureCount: { type: 'integer', minimum: 0, description: 'Failures reported since the order was placed or last recovered' },
  },
} as const;

export const commandRecordSchema = {
  type: 'object',
  description:
    'A command (part 2.2): the record shape of orders without `rows`, always PLACED. Its kind is carried by one field: ' +
    '`readTableState` (READ_TABLE_STATE), `paymentNumber` (REQUEST_BILL), `exportMainData` (EXPORT_DATA, FETCH_REMOTE_MENU).',
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

export const locationViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'failureThreshold'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    failureThreshold: { ...positiveInt, description: 'Failure count at which an order stays FAILED until recovered' },
  },
} as const;

const sessionViewProperties = {
  sessionId: { type: 'string' },
  type: { type: 'string', enum: ['SERVICE', 'CUSTOMER'] },
  locationId: { type: 'string' },
  deviceId: { type: 'string', description: 'SERVICE sessions: the register device' },
  userNumber: { ...positiveInt, description: "CUSTOMER sessions: the customer's user number" },
  tableNumber: { ...positiveInt, description: 'CUSTOMER sessions: the table, when given' },
  createdAt: timestamp,
  expiresAt: { ...timestamp, description: 'Absent when the session does not expire' },
  closedAt: { ...timestamp, description: 'Set when the session was closed; its keys then answer as unknown keys' },
  keyRotatedAt: { ...timestamp, description: 'When the key was last rotated' },
  previousKeyExpiresAt: { ...timestamp, description: 'Until when the key replaced by the last rotation kept working' },
} as const;

/** A session as the admin API shows it: never its key, never the key's hash. */
export const sessionViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sessionId', 'type', 'locationId', 'createdAt'],
  properties: sessionViewProperties,
} as const;

/** The issued shape (auth/keys.ts API_KEY_SHAPE): 32 random bytes and a MAC under the deployment's secret. */
const apiKey = {
  type: 'string',
  pattern: '^pos_[A-Za-z0-9_-]{64}$',
  description: "The API key, shown this once; only its hash is stored. `pos_` and 64 base64url characters: 32 random bytes and a MAC under the deployment's `API_KEY_SECRET`",
} as const;

/** A session just created, with its key. */
export const issuedSessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sessionId', 'type', 'locationId', 'createdAt', 'apiKey'],
  properties: { ...sessionViewProperties, apiKey },
} as const;

/** A session whose key was just rotated: the new key, and until when the old one still works. */
export const rotatedSessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sessionId', 'type', 'locationId', 'createdAt', 'apiKey', 'keyRotatedAt', 'previousKeyExpiresAt'],
  properties: { ...sessionViewProperties, apiKey },
} as const;

const role = { type: 'string', enum: ['viewer', 'manager', 'admin'], description: 'viewer reads; manager also acts on its locations; admin does everything' } as const;
const locationIds = {
  type: 'array',
  items: { type: 'string' },
  minItems: 1,
  description: 'The locations it covers; absent: all locations',
} as const;

const operatorViewProperties = {
  id: { type: 'string' },
  name: { type: 'string' },
  role,
  locationIds,
  createdAt: timestamp,
  tokenRotatedAt: { ...timestamp, description: 'When its token was last replaced' },
} as const;

/** An operator account as the admin API shows it: never its token, never the token's hash. */
export const operatorViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'role', 'createdAt'],
  properties: operatorViewProperties,
} as const;

/** An operator just created, or whose token was just replaced: with its token, shown this once. */
export const issuedOperatorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'role', 'createdAt', 'token'],
  properties: {
    ...operatorViewProperties,
    token: { ...apiKey, description: 'The bearer token, shown this once; only its hash is stored. The shape of an API key.' },
  },
} as const;

/** Who a token is: what the board reads to offer only what the role allows. */
export const currentOperatorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'role'],
  properties: {
    id: { type: 'string', description: 'Absent for the root credential (`ADMIN_TOKEN`)' },
    name: { type: 'string', description: '`root` for `ADMIN_TOKEN`' },
    role,
    locationIds,
  },
} as const;

/** One record of the audit log: an operator write. Never a key, token or secret. */
export const auditRecordSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'at', 'operatorName', 'role', 'method', 'route', 'targets', 'status', 'requestId'],
  properties: {
    id: { type: 'string' },
    at: timestamp,
    operatorId: { type: 'string', description: 'Absent for the root credential (`ADMIN_TOKEN`)' },
    operatorName: { type: 'string', description: '`root` for `ADMIN_TOKEN`' },
    role,
    method: { type: 'string' },
    route: { type: 'string', description: 'The route pattern, e.g. `/admin/v1/locations/:id/orders/:number/recover`' },
    targets: {
      type: 'object',
      description: 'The ids the path named, by parameter (`id` a location, `number`, `sessionId`, `operatorId`, ...)',
      additionalProperties: { type: 'string' },
    },
    locationId: { type: 'string', description: 'The location the write concerns, when one' },
    status: { type: 'integer', description: 'The status of the answer' },
    requestId: { type: 'string' },
  },
} as const;

export const healthSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { type: 'string', const: 'ok' } },
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
export type LocationView = FromSchema<typeof locationViewSchema>;
export type SessionView = FromSchema<typeof sessionViewSchema>;
export type IssuedSession = FromSchema<typeof issuedSessionSchema>;
export type RotatedSession = FromSchema<typeof rotatedSessionSchema>;
export type OperatorView = FromSchema<typeof operatorViewSchema>;
export type IssuedOperator = FromSchema<typeof issuedOperatorSchema>;
export type AuditRecord = FromSchema<typeof auditRecordSchema>;
export type CurrentOperator = FromSchema<typeof currentOperatorSchema>;
export type HealthBody = FromSchema<typeof healthSchema>;
export type ReadinessBody = FromSchema<typeof readinessSchema>;

// Defined with the problem table; published with the other bodies.
export { problemBodySchema, type ProblemBody };
