/**
 * /metrics and Bull Board (a mounted app of its own, not a route), for
 * operators. One entry per operation, by its id (spec.ts).
 */
import { defineOperations, html } from './spec';

export const MONITORING_OPERATIONS = defineOperations({
  metrics: {
    method: 'get',
    path: '/metrics',
    tag: 'Operations',
    summary: "The node's Prometheus metrics",
    description:
      "Prometheus text format 0.0.4 (`text/plain; version=0.0.4`). No keys, ids or order data. The worker's `METRICS_PORT` serves its own, unauthenticated.",
    access: 'admin',
    criticality: 'exempt',
    role: 'admin',
    bound: 'chain',
    ok: { status: 200, description: 'The metrics', content: { 'text/plain': { schema: { type: 'string' } } } },
  },
  bullBoard: {
    method: 'get',
    path: '/admin/queues',
    tag: 'Operations',
    summary: 'Bull Board: the transition queue',
    description:
      'The dashboard of the `order-work` queue. Its pages, assets and JSON API ' +
      'live under `/admin/queues/`, all behind the admin token; ' +
      'they are Bull Board’s own, not part of this contract.',
    access: 'board',
    criticality: 'sheddable',
    role: 'admin',
    bound: 'chain',
    ok: { status: 200, description: 'The page', content: html },
  },
});
