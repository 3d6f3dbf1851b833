/** Health probes: liveness and readiness, on every listener. One entry per operation, by its id (spec.ts). */
import { problems } from '../../domain/problem';
import { healthSchema, readinessSchema } from '../../schemas/responses';
import { defineOperations, json } from './spec';

export const HEALTH_OPERATIONS = defineOperations({
  liveness: {
    method: 'get',
    path: '/healthz',
    tag: 'Operations',
    summary: 'Liveness: the process answers',
    access: 'public',
    criticality: 'exempt',
    ok: { status: 200, description: 'Alive', content: json(healthSchema, { status: 'ok' }) },
  },
  readiness: {
    method: 'get',
    path: '/readyz',
    tag: 'Operations',
    summary: 'Readiness: MongoDB and Redis answer, and the node is not shutting down',
    access: 'public',
    criticality: 'exempt',
    ok: { status: 200, description: 'Ready', content: json(readinessSchema, { status: 'ready', mongo: 'ok', redis: 'ok' }) },
    problems: [problems.unavailable('MongoDB ok, Redis unreachable'), problems.unavailable('Shutting down')],
  },
});
