/**
 * The job payloads of the queue contract (jobs.ts) as JSON Schema, compiled once. A worker checks
 * every job against them before acting: anyone who can add jobs (Redis access, a writable Bull
 * Board) could otherwise hand it operators for ids or strings for numbers.
 */
import Ajv from 'ajv';
import { ORDER_STATES } from '../domain/order-state';
import { ID_PATTERN } from '../store/query-values';
import { LIMITS } from '../schemas/requests';
import { JOB } from './jobs';

const ajv = new Ajv({ allErrors: false, strict: true });

const id = { type: 'string', pattern: ID_PATTERN } as const;

/** What every job may carry besides its own fields (JobBase). */
const base = {
  replyTo: { type: 'string', pattern: '^[A-Za-z0-9_-]+:reply:[0-9a-f-]{36}$' },
  requestId: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,100}$' },
  deadline: { type: 'integer', minimum: 0 },
} as const;

const kindOnly = (kind: string) => ({
  type: 'object',
  additionalProperties: false,
  required: ['kind'],
  properties: { kind: { type: 'string', const: kind } },
});

const orderActionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['scope', 'orderNumber', 'action'],
  properties: {
    ...base,
    scope: {
      type: 'object',
      additionalProperties: false,
      required: ['locationId'],
      properties: { locationId: id, sessionId: id },
    },
    orderNumber: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    action: {
      type: 'object',
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'newState'],
          properties: { kind: { type: 'string', const: 'status' }, newState: { type: 'string', enum: ORDER_STATES } },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['kind'],
          properties: { kind: { type: 'string', const: 'failure' }, reason: { type: 'string', maxLength: LIMITS.reasonLength } },
        },
        kindOnly('finish'),
        kindOnly('submit'),
        kindOnly('recover'),
        kindOnly('session-closed'),
      ],
    },
  },
};

const sessionCloseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sessionId'],
  properties: { ...base, sessionId: id },
};

const validators: Record<string, ReturnType<typeof ajv.compile>> = {
  [JOB.orderAction]: ajv.compile(orderActionSchema),
  [JOB.sessionClose]: ajv.compile(sessionCloseSchema),
};

/**
 * What is wrong with a job's data (`/scope/sessionId must be string`), or undefined when it
 * keeps the contract. The fault names the field, never its value.
 */
export function jobDataFault(name: string, data: unknown): string | undefined {
  const validate = Object.hasOwn(validators, name) ? validators[name] : undefined;
  if (!validate) return 'unknown job name';
  if (validate(data)) return undefined;
  const error = validate.errors![0]!;
  return `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`;
}
