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

/**
 * JSON bodies only (an object or array), within the limit; any failure to read one is a problem.
 * With `refuseOtherTypes`, a body of another media type (or of none) is a 415 before it is read;
 * without, it is read as no body, and the checks of what is missing say so with a 400 (the register
 * interface's rule: docs/register-interface.md, part 4.2 rule 3).
 */
export function jsonBody(limitBytes: number, { refuseOtherTypes }: { refuseOtherTypes: boolean }) {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: `${limitBytes}b`,
    strict: true,
    onerror: (err) => {
      throw new ProblemError(bodyProblem(err as { type?: string; status?: number }, limitBytes));
    },
  }) as unknown as (ctx: AppContext, next: Next) => Promise<void>;
  if (!refuseOtherTypes) return parse;
  return function jsonOnly(ctx: AppContext, next: Next): Promise<void> {
    // a POST that needs no body may come with an empty one (Content-Length: 0)
    const hasBody = (ctx.request.length ?? (ctx.get('transfer-encoding') === '' ? 0 : 1)) > 0;
    if (hasBody && !ctx.request.is('json', '+json')) {
      throw new ProblemError(problems.bodyNotJson(ctx.request.type));
    }
    return parse(ctx, next);
  };
}

/** The request body checked against a schema, or a 400 problem naming the first fault. */
export function bodyOf<T>(ctx: AppContext, validator: Validator<T>): T {
  const body: unknown = ctx.request.body ?? {};
  if (!validator(body)) throw new ProblemError(problemFromSchemaError(validator.errors![0]!));
  return body;
}
