import bodyParser from 'koa-bodyparser';
import type { Next } from 'koa';
import { Problem, ProblemError, problems } from '@pos/shared/domain/problem';
import { Validator, problemFromSchemaError } from '@pos/shared/schemas/requests';
import type { AppContext } from '../context';

/** What raw-body and co-body throw, told apart by `type` and `status`. */
function bodyProblem(err: { type?: string; status?: number }, limitBytes: number): Problem {
  if (err.type === 'entity.too.large' || err.status === 413) return problems.payloadTooLarge(limitBytes);
  if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported' || err.status === 415) {
    return problems.validation('Unsupported request body encoding');
  }
  if (err.type === 'request.aborted') return problems.validation('Request body was cut short');
  return problems.validation('Malformed JSON in request body');
}

/** JSON bodies only (an object or array), within the limit; any failure to read one is a problem. */
export function jsonBody(limitBytes: number) {
  return bodyParser({
    enableTypes: ['json'],
    jsonLimit: `${limitBytes}b`,
    strict: true,
    onerror: (err) => {
      throw new ProblemError(bodyProblem(err as { type?: string; status?: number }, limitBytes));
    },
  }) as unknown as (
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
