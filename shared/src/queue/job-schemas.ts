/**
 * The job payloads of the queue contract (jobs.ts) as JSON Schema, compiled once. A worker checks
 * every job against them before acting: anyone who can add jobs (Redis access, a writable Bull
 * Board) could otherwise hand it operators for ids or strings for numbers.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import type { FromSchema } from 'json-schema-to-ts';
import { ORDER_STATES } from '../domain/order-state';
import { ID_PATTERN } from '../store/query-values';
import { LIMITS } from '../schemas/requests';
import { JOB, type JobDataOf, type JobName } from './jobs';

const ajv = new Ajv({ allErrors: false, strict: true });

const id = { type: 'string', pattern: ID_PATTERN } as const;

/** What every job may carry besides its own fields (JobBase). */
const base = {
  replyTo: { type: 'string', pattern: '^[A-Za-z0-9_-]+:reply:[0-9a-f-]{36}$' },
  requestId: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,100}$' },
  deadline: { type: 'integer', minimum: 0 },
} as const;

const kindOnly = <K extends string>(kind: K) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['kind'],
    properties: { kind: { type: 'string', const: kind } },
  }) as const;

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
          properties: {
            kind: { type: 'string', const: 'failure' },
            reason: { type: 'string', maxLength: LIMITS.reasonLength },
          },
        },
        kindOnly('finish'),
        kindOnly('submit'),
        kindOnly('recover'),
        kindOnly('session-closed'),
      ],
    },
  },
} as const;

const sessionCloseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sessionId'],
  properties: { ...base, sessionId: id },
} as const;

/**
 * Each job's validator: a type guard for its data. Each guard is of its schema's own type
 * (FromSchema), which must be the contract's type for the table to compile: a guard never
 * vouches for more than its schema checks.
 */
const validators: { [N in JobName]: ValidateFunction<JobDataOf<N>> } = {
  [JOB.orderAction]: ajv.compile<FromSchema<typeof orderActionSchema>>(orderActionSchema),
  [JOB.sessionClose]: ajv.compile<FromSchema<typeof sessionCloseSchema>>(sessionCloseSchema),
};

/** A job whose data keeps the queue contract: its name, and its data typed by that name. */
export interface CheckedJob<N extends JobName = JobName> {
  name: N;
  data: JobDataOf<N>;
}

const isJobName = (name: string): name is JobName => Object.hasOwn(validators, name);

function check<N extends JobName>(name: N, data: unknown): CheckedJob<N> | string {
  const validate = validators[name];
  if (validate(data)) return { name, data };
  const error = validate.errors?.[0];
  return `${error?.instancePath || '/'} ${error?.message ?? 'is invalid'}`;
}

/**
 * The job, typed by its name, when its data keeps the contract; else what is wrong with it
 * (`unknown job name`, `/scope/sessionId must be string`). A fault names the field, never its value.
 */
export function checkJob(name: string, data: unknown): CheckedJob | string {
  return isJobName(name) ? check(name, data) : 'unknown job name';
}
