import type { Next } from 'koa';
import { secretsEqual } from '../../../../shared/src/auth/keys';
import { ProblemError, problems } from '../../../../shared/src/domain/problem';
import type { AppContext } from '../context';

/** `Authorization: Bearer <ADMIN_TOKEN>`; anything else is a 401 problem. */
export function requireAdmin(adminToken: string) {
  return async function adminAuth(ctx: AppContext, next: Next): Promise<void> {
    const match = /^Bearer (.+)$/.exec(ctx.get('authorization'));
    if (!match || !secretsEqual(match[1]!, adminToken)) {
      throw new ProblemError(problems.unauthorized('A valid admin token is required'), {
        'WWW-Authenticate': 'Bearer realm="pos-admin"',
      });
    }
    await next();
  };
}
