import bodyParser from 'koa-bodyparser';
import type { Next } from 'koa';
import { ProblemError } from '../../../../shared/src/domain/problem';
import { Validator, problemFromSchemaError } from '../../../../shared/src/schemas';
import type { AppContext } from '../context';

/** JSON bodies only, within the configured limit; errors become problems in problemResponses. */
export function jsonBody(limitBytes: number) {
  return bodyParser({ enableTypes: ['json'], jsonLimit: `${limitBytes}b`, strict: true }) as unknown as (
    ctx: AppContext,
    next: Next,
  ) => Promise<void>;
}

/** The request body checked against a schema, or a 400 problem naming the first fault. */
export function bodyOf<T>(ctx: AppContext, validator: Validator<T>): T {
  const body: unknown = ctx.request.body ?? {};
  if (!validator(body)) throw new ProblemError(problemFromSchemaError(validator.errors![0]!));
  return body;
}
