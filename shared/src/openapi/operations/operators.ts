/** Operator accounts and the audit log (docs/operators.md). One entry per operation, by its id (spec.ts). */
import { problems } from '../../domain/problem';
import { operatorSchema, operatorUpdateSchema } from '../../schemas/requests';
import { auditQuerySchema, auditVerifyQuerySchema, idPageQuerySchema } from '../../schemas/queries';
import {
  auditRecordSchema,
  auditVerificationSchema,
  currentOperatorSchema,
  issuedOperatorSchema,
  operatorViewSchema,
} from '../../schemas/responses';
import { EXAMPLE_IDS, exampleProblems as ex, examples } from '../examples';
import { arrayOf, defineOperations, json, P, paged } from './spec';

export const OPERATOR_OPERATIONS = defineOperations({
  getCurrentOperator: {
    method: 'get',
    path: '/admin/v1/me',
    tag: 'Admin',
    summary: 'Who this token is',
    description:
      "The token's operator: `root` for `ADMIN_TOKEN`; its role and, when bound, its " +
      'locations. What the board reads to offer only what the role allows.',
    access: 'admin',
    criticality: 'normal',
    role: 'viewer',
    bound: 'locations',
    ok: {
      status: 200,
      description: 'The operator',
      content: json(currentOperatorSchema, {
        id: EXAMPLE_IDS.operator,
        name: 'Main Street manager',
        role: 'manager',
        locationIds: [EXAMPLE_IDS.location],
      }),
    },
  },
  createOperator: {
    method: 'post',
    path: '/admin/v1/operators',
    tag: 'Admin',
    summary: 'Create an operator account',
    description:
      'Its bearer token is in this answer only; only its hash is stored. ' +
      'Without `locationIds` it covers every location.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'grants at most its own role, and only `locationIds` within its own (403 otherwise)',
    traits: ['jsonBody'],
    body: {
      schema: operatorSchema,
      example: { name: 'Main Street manager', role: 'manager', locationIds: [EXAMPLE_IDS.location] },
    },
    ok: {
      status: 201,
      description: 'The operator, with its token',
      content: json(issuedOperatorSchema, { ...examples.operator, token: examples.apiKey }),
    },
    problems: [ex.unknownLocation],
  },
  listOperators: {
    method: 'get',
    path: '/admin/v1/operators',
    tag: 'Admin',
    summary: 'List operator accounts',
    description: `${paged} In creation order (by id). Never a token.`,
    access: 'admin',
    criticality: 'sheddable',
    role: 'admin',
    bound: 'locations',
    boundNote: 'lists the operators whose `locationIds` are all within its own',
    traits: ['paged'],
    query: idPageQuerySchema,
    ok: {
      status: 200,
      description: 'A page of operators',
      content: json(arrayOf(operatorViewSchema), [examples.operator]),
    },
  },
  getOperator: {
    method: 'get',
    path: '/admin/v1/operators/{operatorId}',
    tag: 'Admin',
    summary: 'Get an operator account',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only operators whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.operatorId],
    ok: { status: 200, description: 'The operator', content: json(operatorViewSchema, examples.operator) },
    problems: [ex.operatorNotFound],
  },
  updateOperator: {
    method: 'patch',
    path: '/admin/v1/operators/{operatorId}',
    tag: 'Admin',
    summary: "Change an operator's name, role or locations",
    description: '`allLocations: true` makes it cover every location. Holds on every node before it answers.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote:
      'only operators whose `locationIds` are all within its own (another answers 404, as a missing one); grants ' +
      'at most its own role and locations, and never changes its own role or locations (403)',
    traits: ['jsonBody'],
    params: [P.operatorId],
    body: { schema: operatorUpdateSchema, example: { role: 'viewer' } },
    ok: { status: 200, description: 'The operator as changed', content: json(operatorViewSchema, examples.operator) },
    problems: [
      ex.operatorNotFound,
      problems.validation('body must not have both locationIds and allLocations'),
      ex.unknownLocation,
    ],
  },
  rotateOperatorToken: {
    method: 'post',
    path: '/admin/v1/operators/{operatorId}/rotate-token',
    tag: 'Admin',
    summary: "Replace an operator's token",
    description: 'The old token stops at once, on every node. The new one is in this answer only.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only operators whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.operatorId],
    ok: {
      status: 200,
      description: 'The operator, with its new token',
      content: json(issuedOperatorSchema, { ...examples.operator, token: examples.apiKey }),
    },
    problems: [ex.operatorNotFound],
  },
  deleteOperator: {
    method: 'delete',
    path: '/admin/v1/operators/{operatorId}',
    tag: 'Admin',
    summary: 'Delete an operator account',
    description: 'Its token stops at once, on every node.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only operators whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.operatorId],
    ok: { status: 204, description: 'Deleted' },
    problems: [ex.operatorNotFound],
  },
  listAudit: {
    method: 'get',
    path: '/admin/v1/audit',
    tag: 'Admin',
    summary: 'Read the audit log',
    description:
      `${paged} Newest first. One record per operator write (every admin call but ` +
      'GET and HEAD, Bull Board actions), refusals included; ' +
      "never a key, token or secret. An operator bound to locations reads those locations' records only. Kept `AUDIT_RETENTION` (400 days).",
    access: 'admin',
    criticality: 'sheddable',
    role: 'manager',
    bound: 'locations',
    boundNote: "reads its locations' records only",
    traits: ['paged'],
    query: auditQuerySchema,
    ok: {
      status: 200,
      description: 'A page of audit records',
      content: json(arrayOf(auditRecordSchema), [examples.auditRecord]),
    },
  },
  verifyAudit: {
    method: 'get',
    path: '/admin/v1/audit/verify',
    tag: 'Admin',
    summary: "Check the audit log's hash chain",
    description:
      'Checks that each record, oldest first, matches its `hash` and carries the ' +
      'hash of the one before it, from where the chain starts ' +
      '(its oldest records removed by retention) or after `after`, at most `limit` ' +
      'records. `complete: false`: call again with `after=lastSeq`. ' +
      'The first broken link (a record changed, removed or replaced in MongoDB) is ' +
      'named in `brokenAt`. CLI: `npm run admin -- audit verify`.',
    access: 'admin',
    criticality: 'sheddable',
    role: 'admin',
    bound: 'chain',
    query: auditVerifyQuerySchema,
    ok: {
      status: 200,
      description: 'What the check found',
      content: json(auditVerificationSchema, {
        intact: true,
        checked: 1200,
        firstSeq: 1,
        lastSeq: 1200,
        complete: true,
      }),
    },
  },
});
