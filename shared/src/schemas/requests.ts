/**
 * Request body schemas, compiled once. Every body the service accepts is described here (list
 * queries: queries.ts); the input types are derived from the schemas (json-schema-to-ts), and the
 * OpenAPI document publishes the same objects.
 */
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import type { FromSchema } from 'json-schema-to-ts';
import { COMMAND_KINDS, CUSTOMER_COMMAND_KINDS, CommandKind } from '../domain/commands';
import { Problem, problems } from '../domain/problem';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { addFormats, block, LIMITS, line, TEXT_FORMATS, TEXT_PATTERNS } from './text';

export { addFormats, block, LIMITS, line, TEXT_FORMATS, TEXT_PATTERNS };

const ajv = addFormats(new Ajv({ allErrors: false, strict: true }));

const text = line(LIMITS.textLength);
const positiveInt = { type: 'integer', minimum: 1, maximum: 2_147_483_647 } as const;

export const rowSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['productId', 'name', 'quantity', 'unitPrice'],
  properties: {
    productId: line(LIMITS.productIdLength),
    name: text,
    quantity: { type: 'integer', minimum: 1, maximum: LIMITS.quantity },
    unitPrice: { type: 'integer', minimum: 0, maximum: LIMITS.unitPrice },
    notes: block(LIMITS.notesLength),
  },
} as const;

const rowsSchema = { type: 'array', minItems: 1, maxItems: LIMITS.rowsPerOrder, items: rowSchema } as const;

export const statusUpdateSchema = {
  type: 'object',
  required: ['newState'],
  // Any string (within BODY_LIMIT) that is not a state name is the interface's 400 "No enum
  // constant ..." (docs/register-interface.md, part 4.2 rule 1), however long or odd: the
  // problem echoes it made safe.
  properties: {
    newState: {
      type: 'string',
      description: 'The name of an order state; any other string is a 400 "No enum constant ..."',
    },
  },
} as const;

export const failureReportSchema = {
  type: 'object',
  properties: { reason: block(LIMITS.reasonLength) },
} as const;

export const orderSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rows'],
  properties: { rows: rowsSchema, tableNumber: { ...positiveInt } },
} as const;

export const rowsBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rows'],
  properties: { rows: rowsSchema },
} as const;

function commandSchema(kinds: readonly CommandKind[]) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['kind'],
    properties: {
      kind: { type: 'string', enum: kinds },
      tableNumber: { ...positiveInt },
    },
  } as const;
}
export const commandBodySchema = commandSchema(COMMAND_KINDS);
export const customerCommandBodySchema = commandSchema(CUSTOMER_COMMAND_KINDS);

const failureThreshold = { type: 'integer', minimum: 1, maximum: LIMITS.failureThreshold } as const;

export const locationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: text, failureThreshold },
} as const;

/**
 * A change of a location: any of its fields; the threshold applies from the next
 * failure report on, the deadline from the next placement.
 */
export const locationUpdateSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: text,
    failureThreshold,
    orderDeadline: {
      type: 'string',
      maxLength: 16,
      pattern: '^[0-9]+(ms|s|m|h|d)?$',
      description: 'A duration (`90s`, `15m`); `0`: no deadline here',
    },
  },
} as const;

/** A pause of a location: until when (absent: until resumed) and why. */
export const pauseSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    until: { type: 'string', maxLength: LIMITS.timestampLength, format: 'date-time' },
    reason: text,
  },
} as const;

export const serviceSessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['deviceId'],
  properties: { deviceId: text, expiresAt: { type: 'string', maxLength: LIMITS.timestampLength, format: 'date-time' } },
} as const;

export const customerSessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['userNumber'],
  properties: { userNumber: positiveInt, tableNumber: { ...positiveInt } },
} as const;

/** An endpoint's URL: http(s), checked further (SSRF) by the route. */
const webhookUrl = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  format: TEXT_FORMATS.line,
  description: 'http(s) URL of the endpoint',
} as const;
const webhookEvents = {
  type: 'array',
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  items: { type: 'string', enum: WEBHOOK_EVENT_TYPES },
  description: 'The event types delivered',
} as const;
const webhookLocations = {
  type: 'array',
  minItems: 1,
  maxItems: 1000,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 64 },
  description: 'The locations whose events are delivered; absent: every location',
} as const;

export const webhookSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties: {
    url: webhookUrl,
    events: webhookEvents,
    locationIds: webhookLocations,
    description: block(LIMITS.reasonLength),
  },
} as const;

/**
 * A change of a subscription; `locationIds: []` makes it cover every location
 * again, `enabled: true` re-enables a disabled one.
 */
export const webhookUpdateSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    url: webhookUrl,
    events: webhookEvents,
    locationIds: { ...webhookLocations, minItems: 0 },
    description: block(LIMITS.reasonLength),
    enabled: { type: 'boolean', const: true, description: 'true: re-enable a disabled endpoint' },
  },
} as const;

const operatorRole = { type: 'string', enum: ['viewer', 'manager', 'admin'] } as const;
const operatorLocations = {
  type: 'array',
  items: { type: 'string', minLength: 1, maxLength: 64 },
  minItems: 1,
  maxItems: 1000,
  uniqueItems: true,
} as const;

export const operatorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'role'],
  properties: { name: text, role: operatorRole, locationIds: operatorLocations },
} as const;

/**
 * A change of an operator: any of its fields; `locationIds: []` is not
 * allowed (`null` is not either: absent means unchanged).
 */
export const operatorUpdateSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: text,
    role: operatorRole,
    locationIds: operatorLocations,
    allLocations: {
      type: 'boolean',
      const: true,
      description: 'Removes `locationIds`: the operator covers every location',
    },
  },
} as const;

export type RowInput = FromSchema<typeof rowSchema>;
export type StatusUpdateInput = FromSchema<typeof statusUpdateSchema>;
export type FailureReportInput = FromSchema<typeof failureReportSchema>;
export type OrderInput = FromSchema<typeof orderSchema>;
export type RowsInput = FromSchema<typeof rowsBodySchema>;
export type CommandInput = FromSchema<typeof commandBodySchema>;
export type LocationInput = FromSchema<typeof locationSchema>;
export type WebhookInput = FromSchema<typeof webhookSchema>;
export type WebhookUpdateInput = FromSchema<typeof webhookUpdateSchema>;
export type LocationUpdateInput = FromSchema<typeof locationUpdateSchema>;
export type ServiceSessionInput = FromSchema<typeof serviceSessionSchema>;
export type CustomerSessionInput = FromSchema<typeof customerSessionSchema>;
export type PauseInput = FromSchema<typeof pauseSchema>;
export type OperatorInput = FromSchema<typeof operatorSchema>;
export type OperatorUpdateInput = FromSchema<typeof operatorUpdateSchema>;

/** Human names of required fields, for the interface's "<Name> is required." detail. */
const FIELD_LABELS: Record<string, string> = {
  name: 'Location name',
  newState: 'newState',
  rows: 'rows',
  kind: 'kind',
  deviceId: 'deviceId',
  userNumber: 'userNumber',
  productId: 'productId',
  quantity: 'quantity',
  unitPrice: 'unitPrice',
};

export function problemFromSchemaError(error: ErrorObject): Problem {
  if (error.keyword === 'required') {
    const field = String(error.params.missingProperty);
    const where = error.instancePath ? `${error.instancePath.slice(1).replace(/\//g, '.')}.` : '';
    return problems.required(`${where}${FIELD_LABELS[field] ?? field}`);
  }
  const where = error.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : 'body';
  if (error.keyword === 'additionalProperties') {
    // The name is the caller's: named only when it is a plain, short one.
    const field = String(error.params.additionalProperty);
    return problems.validation(`${where} has unknown field${/^[A-Za-z0-9_]{1,64}$/.test(field) ? ` ${field}` : 's'}`);
  }
  if (error.keyword === 'format' && error.params.format === TEXT_FORMATS.line) {
    return problems.validation(
      `${where} must be one line without control characters, line separators or bidirectional controls`,
    );
  }
  if (error.keyword === 'format' && error.params.format === TEXT_FORMATS.block) {
    return problems.validation(
      `${where} must not contain control characters (but tab and newline) or bidirectional controls`,
    );
  }
  if (error.keyword === 'minProperties') {
    return problems.validation(`${where} must have at least ${String(error.params.limit)} field(s)`);
  }
  if (error.keyword === 'enum') {
    return problems.validation(`${where} must be one of ${(error.params.allowedValues as string[]).join(', ')}`);
  }
  return problems.validation(`${where} ${error.message ?? 'is invalid'}`);
}

export type Validator<T> = ValidateFunction<T>;

/**
 * Schemas are plain JSON Schema, typed by the input interface they describe. (ajv's
 * JSONSchemaType would force `nullable` onto optional fields, and a null is never valid input.)
 */
export function compile<T>(schema: object): Validator<T> {
  return ajv.compile<T>(schema);
}

export const validators = {
  statusUpdate: compile<StatusUpdateInput>(statusUpdateSchema),
  failureReport: compile<FailureReportInput>(failureReportSchema),
  order: compile<OrderInput>(orderSchema),
  rows: compile<RowsInput>(rowsBodySchema),
  command: compile<CommandInput>(commandBodySchema),
  customerCommand: compile<CommandInput>(customerCommandBodySchema),
  location: compile<LocationInput>(locationSchema),
  serviceSession: compile<ServiceSessionInput>(serviceSessionSchema),
  customerSession: compile<CustomerSessionInput>(customerSessionSchema),
  locationUpdate: compile<LocationUpdateInput>(locationUpdateSchema),
  pause: compile<PauseInput>(pauseSchema),
  webhook: compile<WebhookInput>(webhookSchema),
  webhookUpdate: compile<WebhookUpdateInput>(webhookUpdateSchema),
  operator: compile<OperatorInput>(operatorSchema),
  operatorUpdate: compile<OperatorUpdateInput>(operatorUpdateSchema),
};
