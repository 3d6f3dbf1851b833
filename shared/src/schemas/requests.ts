/**
 * Request body schemas, compiled once. Every body the service accepts is described here.
 */
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { COMMAND_KINDS, CUSTOMER_COMMAND_KINDS, CommandKind } from '../domain/commands';
import { Problem, problems } from '../domain/problem';

const ajv = new Ajv({ allErrors: false, strict: true });
addFormats(ajv, ['date-time']);

/**
 * Text that reaches register screens and kitchen printers carries no control characters
 * (escape sequences, NUL), no bidirectional embeddings, overrides or isolates (which reorder
 * what a screen shows), and no lone surrogates (which no printer can encode).
 * A line has no control character at all; a text block (notes, reasons) may hold tabs and newlines.
 */
const UNSAFE_IN_LINE = /[\p{Cc}\p{Cs}\u202A-\u202E\u2066-\u2069]/u;
const UNSAFE_IN_BLOCK = /[\p{Cs}\u202A-\u202E\u2066-\u2069]|(?![\t\n])\p{Cc}/u;
export const TEXT_FORMATS = { line: 'single-line-text', block: 'multi-line-text' } as const;
ajv.addFormat(TEXT_FORMATS.line, { type: 'string', validate: (value: string) => !UNSAFE_IN_LINE.test(value) });
ajv.addFormat(TEXT_FORMATS.block, { type: 'string', validate: (value: string) => !UNSAFE_IN_BLOCK.test(value) });

export const LIMITS = {
  rowsPerOrder: 200,
  quantity: 999,
  unitPrice: 100_000_000,
  notesLength: 500,
  textLength: 200,
  productIdLength: 64,
  reasonLength: 1000,
  stateLength: 32,
  timestampLength: 40,
} as const;

export interface RowInput {
  productId: string;
  name: string;
  quantity: number;
  unitPrice: number;
  notes?: string;
}

/** One line of text, 1 to `maxLength` characters. */
const line = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength, format: TEXT_FORMATS.line }) as const;
/** Free text over lines, up to `maxLength` characters. */
const block = (maxLength: number) => ({ type: 'string', maxLength, format: TEXT_FORMATS.block }) as const;
const text = line(LIMITS.textLength);
const positiveInt = { type: 'integer', minimum: 1, maximum: 2_147_483_647 } as const;

const rowSchema = {
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
  // Bounded and plain, as its value is named in the "No enum constant" problem.
  properties: { newState: { type: 'string', maxLength: LIMITS.stateLength, format: TEXT_FORMATS.line } },
};

export const failureReportSchema = {
  type: 'object',
  properties: { reason: block(LIMITS.reasonLength) },
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
  properties: { deviceId: text, expiresAt: { type: 'string', maxLength: LIMITS.timestampLength, format: 'date-time' } },
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
    // The name is the caller's: named only when it is a plain, short one.
    const field = String(error.params.additionalProperty);
    return problems.validation(`${where} has unknown field${/^[A-Za-z0-9_]{1,64}$/.test(field) ? ` ${field}` : 's'}`);
  }
  if (error.keyword === 'format' && error.params.format === TEXT_FORMATS.line) {
    return problems.validation(`${where} must be one line without control characters or bidirectional controls`);
  }
  if (error.keyword === 'format' && error.params.format === TEXT_FORMATS.block) {
    return problems.validation(`${where} must not contain control characters (but tab and newline) or bidirectional controls`);
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
