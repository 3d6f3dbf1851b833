import type { Next } from 'koa';
import { secretsEqual } from '@pos/shared/auth/keys';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { AppContext } from '../context';

/** The admin token from `Bearer <token>`, or, where allowed, HTTP Basic (any user, token as password). */
function adminTokenOf(authorization: string, allowBasic: boolean): string | undefined {
  const match = /^(Bearer|Basic)\s+(\S+)\s*$/i.exec(authorization);
  if (!match) return undefined;
  if (match[1]!.toLowerCase() === 'bearer') return match[2];
  if (!allowBasic) return undefined;
  const decoded = Buffer.from(match[2]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/**
 * `Authorization: Bearer <ADMIN_TOKEN>`; anything else is a 401 problem. Pages a browser opens
 * (Bull Board) pass `browser: true`: a browser cannot send a bearer header when navigating, so
 * HTTP Basic is accepted too, and the 401 asks the browser to prompt.
 */
export function requireAdmin(adminToken: string, { browser = false } = {}) {
  const challenge = browser ? 'Basic realm="pos-admin"' : 'Bearer realm="pos-admin"';
  return async function adminAuth(ctx: AppContext, next: Next): Promise<void> {
    const token = adminTokenOf(ctx.get('authorization'), browser);
    if (token === undefined || !secretsEqual(token, adminToken)) {
      throw new ProblemError(problems.unauthorized('A valid admin token is required'), { 'WWW-Authenticate': challenge });
    }
    await next();
  };
}
