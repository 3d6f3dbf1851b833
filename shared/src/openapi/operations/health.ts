/** Health probes: liveness and readiness, on every listener. One entry per operation, by its id (spec.ts). */
import { problems } from '../../domain/problem';
import { healthSchema, readinessSchema } from '../../schemas/responses';
import { defineOperations, json } from './spec';

export const HEALTH_OPERATIONS = defineOperations({
  liveness: {
    method: 'get',
    path: '/healthz',
    tag: 'Operations',
    summary: 'Liveness: the process answers, with the release and commit it runs',
    access: 'public',
    criticality: 'exempt',
    ok: {
      status: 200,
      description: 'Alive',
      content: json(healthSchema, {
        status: 'ok',
        version: '0.5.0',
        commit: '14e85b5c0d9b8a4f2e6c5d1a3b7f9e0c2d4a6b8c',
      }),
    },
  },
  readiness: {
    method: 'get',
    path: '/readyz',
    tag: 'Operations',
    summary: 'Readiness: MongoDB and Redis answer, and the node is not shutting down',
    access: 'public',
    criticality: 'exempt',
    ok: {
      status: 200,
      description: 'Ready',
      content: json(readinessSchema, { status: 'ready', mongo: 'ok', redis: 'ok' }),
    },
    problems: [problems.unavailable('MongoDB ok, Redis unreachable'), problems.unavailable('Shutting down')],
  },
});
