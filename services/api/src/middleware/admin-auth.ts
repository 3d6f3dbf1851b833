import type { Next } from 'koa';
import { secretsEqual } from '@pos/shared/auth/keys';
import { Role, roleCovers } from '@pos/shared/auth/roles';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { OperatorLookup } from '../auth/operator-lookup';
import type { AppContext, Operator } from '../context';

/** `ADMIN_TOKEN`: the deployment's root credential, an admin of every location. */
export const ROOT_OPERATOR: Operator = { name: 'root', role: 'admin' };

/** What authenticates operators: the root token, and the operators' tokens. */
export interface OperatorAuth {
  adminToken: string;
  operatorLookup: Pick<OperatorLookup, 'find'>;
}

/** The bearer token from `Bearer <token>`, or, where allowed, HTTP Basic (any user, token as password). */
function adminTokenOf(authorization: string, allowBasic: boolean): string | undefined {
  const match = /^(Bearer|Basic)\s+(\S+)\s*$/i.exec(authorization);
  if (!match) return undefined;
  if (match[1]!.toLowerCase() === 'bearer') return match[2];
  if (!allowBasic) return undefined;
  const decoded = Buffer.from(match[2]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** The operator a token names: root for ADMIN_TOKEN, an operator account for its token, else undefined. */
async function operatorOf(auth: OperatorAuth, token: string): Promise<Operator | undefined> {
  if (secretsEqual(token, auth.adminToken)) return ROOT_OPERATOR;
  const doc = await auth.operatorLookup.find(token);
  return doc ? { id: doc._id, name: doc.name, role: doc.role, locationIds: doc.locationIds } : undefined;
}

/**
 * `Authorization: Bearer <ADMIN_TOKEN or an operator's token>`, which sets `ctx.state.operator`;
 * anything else is a 401 problem. Pages a browser opens (Bull Board) pass `browser: true`: a
 * browser cannot send a bearer header when navigating, so HTTP Basic is accepted too, and the 401
 * asks the browser to prompt.
 */
export function authenticateOperator(auth: OperatorAuth, { browser = false } = {}) {
  const challenge = browser ? 'Basic realm="pos-admin"' : 'Bearer realm="pos-admin"';
  return async function operatorAuth(ctx: AppContext, next: Next): Promise<void> {
    const token = adminTokenOf(ctx.get('authorization'), browser);
    const operator = token === undefined ? undefined : await operatorOf(auth, token);
    if (!operator)
      throw new ProblemError(problems.unauthorized('A valid admin token is required'), {
        'WWW-Authenticate': challenge,
      });
    ctx.state.operator = operator;
    if (operator.id) ctx.state.log = ctx.state.log.child({ operatorId: operator.id });
    await next();
  };
}

/** The authenticated operator (authenticateOperator ran). */
export function operatorOfRequest(ctx: AppContext): Operator {
  if (!ctx.state.operator) throw new Error('route is missing its operator authentication');
  return ctx.state.operator;
}

/** A 403 problem `Forbidden` unless the operator's role covers `role`. */
export function allowRole(role: Role) {
  return async function allow(ctx: AppContext, next: Next): Promise<void> {
    const operator = operatorOfRequest(ctx);
    if (!roleCovers(operator.role, role))
      throw new ProblemError(problems.forbidden(`This needs the ${role} role; this token is a ${operator.role}`));
    await next();
  };
}
