/**
 * Request body schemas, compiled once. Every body the service accepts is described here.
 */
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { COMMAND_KINDS, CUSTOMER_COMMAND_KINDS, CommandKind } from '../domain/commands';
import { Problem, problems } from '../domain/problem';

const ajv = new Ajv({ allErrors: false, strict: true });
addFormats(ajv, ['date-time']);

export const LIMITS = {
  rowsPerOrder: 200,
  quantity: 999,
  unitPrice: 100_000_000,
  notesLength: 500,
  textLength: 200,
  reasonLength: 1000,
} as const;

export interface RowInput {
  productId: string;
  name: string;
  quantity: number;
  unitPrice: number;
  notes?: string;
}

const text = { type: 'string', minLength: 1, maxLength: LIMITS.textLength } as const;
const positiveInt = { type: 'integer', minimum: 1, maximum: 2_147_483_647 } as const;

const rowSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['productId', 'name', 'quantity', 'unitPrice'],
  properties: {
    productId: { type: 'string', minLength: 1, maxLength: 64 },
    name: text,
    quantity: { type: 'integer', minimum: 1, maximum: LIMITS.quantity },
    unitPrice: { type: 'integer', minimum: 0, maximum: LIMITS.unitPrice },
    notes: { type: 'string', maxLength: LIMITS.notesLength },
  },
};

const rowsSchema = { type: 'array', minItems: 1, maxItems: LIMITS.rowsPerOrder, items: rowSchema } as const;

export interface StatusUpdateInput {
  newState: string;
}
export interface FailureReportInput {
  reason?: string;
}
export interface OrderInput {
  rows: RowInput[];
  tableNumber?: number;
}
export interface RowsInput {
  rows: RowInput[];
}
export interface CommandInput {
  kind: CommandKind;
  tableNumber?: number;
}
export interface LocationInput {
  name: string;
  failureThreshold?: number;
}
export interface ServiceSessionInput {
  deviceId: string;
  expiresAt?: string;
}
export interface CustomerSessionInput {
  userNumber: number;
  tableNumber?: number;
}

export const statusUpdateSchema = {
  type: 'object',
  required: ['newState'],
  properties: { newState: { type: 'string' } },
};

export const failureReportSchema = {
  type: 'object',
  properties: { reason: { type: 'string', maxLength: LIMITS.reasonLength } },
};

export const orderSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rows'],
  properties: { rows: rowsSchema, tableNumber: { ...positiveInt } },
};

export const rowsBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rows'],
  properties: { rows: rowsSchema },
};

function commandSchema(kinds: readonly CommandKind[]) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['kind'],
    properties: {
      kind: { type: 'string', enum: kinds },
      tableNumber: { ...positiveInt },
    },
  };
}
export const commandBodySchema = commandSchema(COMMAND_KINDS);
export const customerCommandBodySchema = commandSchema(CUSTOMER_COMMAND_KINDS);

export const locationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: text, failureThreshold: { type: 'integer', minimum: 1, maximum: 1000 } },
};

export const serviceSessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['deviceId'],
  properties: { deviceId: text, expiresAt: { type: 'string', format: 'date-time' } },
};

export const customerSessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['userNumber'],
  properties: { userNumber: positiveInt, tableNumber: { ...positiveInt } },
};

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
    return problems.validation(`${where} has unknown field ${String(error.params.additionalProperty)}`);
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
};
