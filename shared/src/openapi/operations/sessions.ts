/** A location's sessions and their keys (the admin API). One entry per operation, by its id (spec.ts). */
import { problems } from '../../domain/problem';
import { customerSessionSchema, serviceSessionSchema } from '../../schemas/requests';
import { idPageQuerySchema } from '../../schemas/queries';
import { issuedSessionSchema, rotatedSessionSchema, sessionViewSchema } from '../../schemas/responses';
import { exampleProblems as ex, examples } from '../examples';
import { arrayOf, defineOperations, json, P, paged } from './spec';

export const SESSION_OPERATIONS = defineOperations({
  listSessions: {
    method: 'get',
    path: '/admin/v1/locations/{id}/sessions',
    tag: 'Admin',
    summary: "List a location's sessions",
    description: `${paged} In creation order (by id), open and closed. Never a key, never a key's hash.`,
    access: 'admin',
    criticality: 'sheddable',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    traits: ['paged'],
    query: idPageQuerySchema,
    ok: {
      status: 200,
      description: 'A page of sessions',
      content: json(arrayOf(sessionViewSchema), [examples.session]),
    },
    problems: [ex.locationNotFound],
  },
  createServiceSession: {
    method: 'post',
    path: '/admin/v1/locations/{id}/service-sessions',
    tag: 'Admin',
    summary: 'Issue a register key (SERVICE session)',
    description: 'The key is shown this once. The session does not expire unless `expiresAt` is given.',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: serviceSessionSchema, example: { deviceId: 'register-1' } },
    ok: {
      status: 201,
      description: 'The session and its key',
      content: json(issuedSessionSchema, { ...examples.session, apiKey: examples.apiKey }),
    },
    problems: [ex.locationNotFound],
  },
  createCustomerSession: {
    method: 'post',
    path: '/admin/v1/locations/{id}/customer-sessions',
    tag: 'Admin',
    summary: 'Issue a customer app key (CUSTOMER session)',
    description: 'The key is shown this once; the session expires after `CUSTOMER_SESSION_TTL` (12 h).',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: customerSessionSchema, example: { userNumber: 1001, tableNumber: 4 } },
    ok: { status: 201, description: 'The session and its key', content: json(issuedSessionSchema) },
    problems: [ex.locationNotFound],
  },
  rotateSessionKey: {
    method: 'post',
    path: '/admin/v1/sessions/{sessionId}/rotate-key',
    tag: 'Admin',
    summary: "Rotate a session's key",
    description:
      'A new key, shown this once, opens the session from now on. The key it ' +
      'replaces keeps working for `KEY_ROTATION_GRACE` (10 min), ' +
      'then answers exactly as a revoked key (the text/plain 401), and streams ' +
      'opened with it end. Rotating again ends an earlier key at once.',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    params: [P.sessionId],
    ok: {
      status: 200,
      description: 'The session with its new key',
      content: json(rotatedSessionSchema, {
        ...examples.session,
        keyRotatedAt: '2026-11-21T08:00:00.000Z',
        previousKeyExpiresAt: '2026-11-21T08:10:00.000Z',
        apiKey: examples.apiKey,
      }),
    },
    problems: [ex.sessionNotFound, problems.conflict('Session is closed; its key cannot be rotated')],
  },
  closeSession: {
    method: 'delete',
    path: '/admin/v1/sessions/{sessionId}',
    tag: 'Admin',
    summary: 'Close (revoke) a session',
    description:
      "Its keys then answer the text/plain 401 and its streams end; a customer session's PLACED orders are aborted.",
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['queued'],
    partitionBy: 'session',
    params: [P.sessionId],
    ok: { status: 204, description: 'Closed' },
    problems: [ex.sessionNotFound],
  },
});
