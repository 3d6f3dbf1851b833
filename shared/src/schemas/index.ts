/**
 * Request body schemas, compiled once. Every body the service accepts is described here.
 */
import Ajv, { ErrorObject, JSONSchemaType, ValidateFunction } from 'ajv';
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

const rowSchema: JSONSchemaType<RowInput> = {
  type: 'object',
  additionalProperties: false,
  required: ['productId', 'name', 'quantity', 'unitPrice'],
  properties: {
    productId: { type: 'string', minLength: 1, maxLength: 64 },
    name: text,
    quantity: { type: 'integer', minimum: 1, maximum: LIMITS.quantity },
    unitPrice: { type: 'integer', minimum: 0, maximum: LIMITS.unitPrice },
    notes: { type: 'string', maxLength: LIMITS.notesLength, nullable: true },
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

export const statusUpdateSchema: JSONSchemaType<StatusUpdateInput> = {
  type: 'object',
  required: ['newState'],
  properties: { newState: { type: 'string' } },
};

export const failureReportSchema: JSONSchemaType<FailureReportInput> = {
  type: 'object',
  properties: { reason: { type: 'string', maxLength: LIMITS.reasonLength, nullable: true } },
};

export const orderSchema: JSONSchemaType<OrderInput> = {
  type: 'object',
  additionalProperties: false,
  required: ['rows'],
  properties: { rows: rowsSchema as never, tableNumber: { ...positiveInt, nullable: true } },
};

export const rowsBodySchema: JSONSchemaType<RowsInput> = {
  type: 'object',
  additionalProperties: false,
  required: ['rows'],
  properties: { rows: rowsSchema as never },
};

function commandSchema(kinds: readonly CommandKind[]): JSONSchemaType<CommandInput> {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['kind'],
    properties: {
      kind: { type: 'string', enum: kinds as CommandKind[] },
      tableNumber: { ...positiveInt, nullable: true },
    },
  };
}
export const commandBodySchema = commandSchema(COMMAND_KINDS);
export const customerCommandBodySchema = commandSchema(CUSTOMER_COMMAND_KINDS);

export const locationSchema: JSONSchemaType<LocationInput> = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: text, failureThreshold: { type: 'integer', minimum: 1, maximum: 1000, nullable: true } },
};

export const serviceSessionSchema: JSONSchemaType<ServiceSessionInput> = {
  type: 'object',
  additionalProperties: false,
  required: ['deviceId'],
  properties: { deviceId: text, expiresAt: { type: 'string', format: 'date-time', nullable: true } },
};

export const customerSessionSchema: JSONSchemaType<CustomerSessionInput> = {
  type: 'object',
  additionalProperties: false,
  required: ['userNumber'],
  properties: { userNumber: positiveInt, tableNumber: { ...positiveInt, nullable: true } },
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

export function compile<T>(schema: JSONSchemaType<T>): Validator<T> {
  return ajv.compile(schema);
}

export const validators = {
  statusUpdate: compile(statusUpdateSchema),
  failureReport: compile(failureReportSchema),
  order: compile(orderSchema),
  rows: compile(rowsBodySchema),
  command: compile(commandBodySchema),
  customerCommand: compile(customerCommandBodySchema),
  location: compile(locationSchema),
  serviceSession: compile(serviceSessionSchema),
  customerSession: compile(customerSessionSchema),
};
